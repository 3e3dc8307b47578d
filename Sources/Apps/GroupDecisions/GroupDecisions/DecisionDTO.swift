import Foundation

/// A decision as the API sends it; the design gives it no DTO, so this one mirrors its domain model.
package struct DecisionDTO: Codable, Sendable, Equatable {
    package struct ResultDTO: Codable, Sendable, Equatable {
        package var restaurantId: String
        package var selectedAt: String
        package var reasoning: String?
        package var weights: [String: Double]?
    }

    package struct VoteDTO: Codable, Sendable, Equatable {
        package var userId: String
        package var rankings: [String]
        package var submittedAt: String
    }

    package var _id: String
    package var type: String
    package var collectionId: String
    package var groupId: String?
    package var createdBy: String?
    package var participants: [String]
    package var method: String
    package var status: String
    package var deadline: String?
    package var visitDate: String
    package var result: ResultDTO?
    package var votes: [VoteDTO]?
    package var createdAt: String
    package var updatedAt: String

    /// The domain decision. Besides dates and enums, the rules of the table hold: completed ⇔ a result, a group
    /// decision has its group, the deadline is not after the visit date, a manual result has no weights.
    package func toDomain() throws(DTOMappingError) -> Decision {
        let status = try DTOMapping.enumValue(status, DecisionStatus.self, field: "status")
        let method = try DTOMapping.enumValue(method, DecisionMethod.self, field: "method")
        let type = try DTOMapping.enumValue(type, DecisionType.self, field: "type")
        guard (status == .completed) == (result != nil) else {
            throw DTOMappingError(field: "result", value: result == nil ? "null" : "present", reason: "a result exactly when the status is completed")
        }
        guard (type == .group) == (groupId != nil) else {
            throw DTOMappingError(field: "groupId", value: groupId ?? "null", reason: "a group decision has its group, a personal one none")
        }
        let visit = try DTOMapping.date(visitDate, field: "visitDate")
        let deadline = try DTOMapping.date(deadline, field: "deadline")
        if let deadline, deadline > visit { throw DTOMappingError(field: "deadline", value: self.deadline ?? "", reason: "after visitDate") }
        var mappedVotes: [Vote]?
        if let votes {
            mappedVotes = []
            for (index, vote) in votes.enumerated() {
                mappedVotes?.append(Vote(userID: vote.userId, rankings: vote.rankings,
                                         submittedAt: try DTOMapping.date(vote.submittedAt, field: "votes[\(index)].submittedAt")))
            }
        }
        return Decision(id: _id, type: type, collectionID: collectionId, groupID: groupId, createdBy: createdBy, participants: participants,
                        method: method, status: status, deadline: deadline, visitDate: visit, result: try mappedResult(method: method),
                        votes: mappedVotes, createdAt: try DTOMapping.date(createdAt, field: "createdAt"),
                        updatedAt: try DTOMapping.date(updatedAt, field: "updatedAt"))
    }

    func mappedResult(method: DecisionMethod) throws(DTOMappingError) -> DecisionResult? {
        guard let result else { return nil }
        if method == .manual, result.weights != nil { throw DTOMappingError(field: "result.weights", value: "present", reason: "a manual pick has no weights") }
        return DecisionResult(restaurantID: result.restaurantId, selectedAt: try DTOMapping.date(result.selectedAt, field: "result.selectedAt"),
                              reasoning: result.reasoning, weights: result.weights)
    }
}

extension DecisionDTO {
    /// The DTO of a domain value (dates as RFC 3339 UTC with milliseconds).
    package init(_ decision: Decision) {
        _id = decision.id; type = decision.type.rawValue; collectionId = decision.collectionID; groupId = decision.groupID
        createdBy = decision.createdBy; participants = decision.participants; method = decision.method.rawValue; status = decision.status.rawValue
        deadline = decision.deadline.map(DTOMapping.format); visitDate = DTOMapping.format(decision.visitDate)
        result = decision.result.map { ResultDTO(restaurantId: $0.restaurantID, selectedAt: DTOMapping.format($0.selectedAt), reasoning: $0.reasoning, weights: $0.weights) }
        votes = decision.votes?.map { VoteDTO(userId: $0.userID, rankings: $0.rankings, submittedAt: DTOMapping.format($0.submittedAt)) }
        createdAt = DTOMapping.format(decision.createdAt); updatedAt = DTOMapping.format(decision.updatedAt)
    }
}
