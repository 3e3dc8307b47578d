import Foundation
@testable import GroupDecisions
import Testing

@Suite("DTO ↔ domain mapping")
struct DTOMappingTests {
    @Test("RFC 3339 dates with an offset, fractional seconds optional", arguments: [
        ("2026-11-25T12:00:00Z", 1_795_608_000.0),
        ("2026-11-25T12:00:00.5Z", 1_795_608_000.5),
        ("2026-11-25T12:00:00.123456789Z", 1_795_608_000.123456789),
        ("2026-11-25T15:00:00+03:00", 1_795_608_000.0),
        ("2026-11-25T07:30:00-04:30", 1_795_608_000.0),
        ("2024-02-29T00:00:00z", 1_709_164_800.0),
    ])
    func acceptsDates(text: String, seconds: Double) throws {
        let date = try DTOMapping.date(text, field: "createdAt")
        #expect(abs(date.timeIntervalSince1970 - seconds) < 1e-6, "\(text) → \(date.timeIntervalSince1970)")
    }

    @Test("a bad date is an error naming the field and value, never a default", arguments: [
        "2026-11-25T12:00:00",            // no offset
        "2026-11-25 12:00:00Z",           // no T
        "2026-11-25",                     // a date alone
        "2026-02-30T12:00:00Z",           // no such day
        "2025-02-29T12:00:00Z",           // not a leap year
        "2026-11-25T24:00:00Z",           // hour 24
        "2026-11-25T12:00:00.Z",          // empty fraction
        "2026-11-25T12:00:00+0300",       // offset without colon
        "2026-11-25T12:00:00Z trailing",
        "",
        "٢٠٢٦-11-25T12:00:00Z",           // Arabic-Indic digits
    ])
    func rejectsDates(text: String) {
        #expect(throws: DTOMappingError(field: "createdAt", value: text, reason: "not an RFC 3339 date-time with an offset")) {
            _ = try DTOMapping.date(text, field: "createdAt")
        }
    }

    static func collection(type: String = "personal", createdAt: String = "2026-11-25T12:00:00Z") -> CollectionDTO {
        CollectionDTO(_id: "c1", name: "Favs", description: nil, type: type, ownerId: "u1", restaurantIds: ["r1"], createdAt: createdAt, updatedAt: "2026-11-25T12:00:00Z")
    }

    @Test("unknown enum values and invalid URLs name field and value; an absent optional is nil")
    func enumsAndURLs() throws {
        #expect(throws: DTOMappingError(field: "type", value: "shared", reason: "not one of personal, group")) { _ = try Self.collection(type: "shared").toDomain() }
        #expect(throws: DTOMappingError(field: "createdAt", value: "yesterday", reason: "not an RFC 3339 date-time with an offset")) {
            _ = try Self.collection(createdAt: "yesterday").toDomain()
        }
        var restaurant = RestaurantDTO(_id: "r1", googlePlaceId: "g1", name: "R", address: "A", coordinates: .init(lat: 24.7, lng: 46.7), cuisine: "cafe",
                                       rating: nil, priceRange: nil, timeToPickUp: nil, photos: nil, phoneNumber: nil, website: nil, hours: nil,
                                       cachedAt: "2026-11-25T12:00:00Z", lastUpdated: "2026-11-25T12:00:00Z")
        let plain = try restaurant.toDomain()
        #expect(plain.rating == nil && plain.priceRange == nil && plain.website == nil && plain.photos.isEmpty)
        restaurant.priceRange = "$$$$$"
        #expect(throws: DTOMappingError(field: "priceRange", value: "$$$$$", reason: "not one of $, $$, $$$, $$$$")) { _ = try restaurant.toDomain() }
        restaurant.priceRange = "$$"
        restaurant.website = "https://burgerjo int.com"  // the design's own mock
        #expect(throws: DTOMappingError(field: "website", value: "https://burgerjo int.com", reason: "not an absolute http(s) URL")) { _ = try restaurant.toDomain() }
        restaurant.website = "https://example.com/menu"
        restaurant.photos = ["https://example.com/a.jpg", "not a url"]
        #expect(throws: DTOMappingError(field: "photos[1]", value: "not a url", reason: "not an absolute http(s) URL")) { _ = try restaurant.toDomain() }
        restaurant.photos = ["https://example.com/a.jpg"]
        #expect(try restaurant.toDomain().priceRange == .moderate)
    }

    static let decision = DecisionDTO(_id: "d1", type: "group", collectionId: "c1", groupId: "g1", createdBy: "u1", participants: ["u1", "u2"],
                                      method: "tiered", status: "completed", deadline: "2026-11-25T12:00:00+03:00", visitDate: "2026-11-25T20:00:00+03:00",
                                      result: .init(restaurantId: "r1", selectedAt: "2026-11-25T09:00:00.250Z", reasoning: "irv", weights: ["r1": 0.75, "r2": 0.25]),
                                      votes: [.init(userId: "u1", rankings: ["r1", "r2"], submittedAt: "2026-11-25T08:00:00Z")],
                                      createdAt: "2026-11-25T07:00:00Z", updatedAt: "2026-11-25T09:00:00.250Z")

    @Test("a decision maps both ways; the table's rules hold in the mapping too")
    func decisions() throws {
        let domain = try Self.decision.toDomain()
        #expect(domain.status == .completed && domain.method == .tiered)
        #expect(domain.result?.selectedAt.timeIntervalSince1970 == 1_795_597_200.25)
        let back = DecisionDTO(domain)
        #expect(try back.toDomain() == domain)
        #expect(back.deadline == "2026-11-25T09:00:00.000Z")
        var broken = Self.decision
        broken.status = "active"
        #expect(throws: DTOMappingError(field: "result", value: "present", reason: "a result exactly when the status is completed")) { _ = try broken.toDomain() }
        broken = Self.decision
        broken.deadline = "2026-11-26T12:00:00Z"
        #expect(throws: DTOMappingError.self) { _ = try broken.toDomain() }
        broken = Self.decision
        broken.votes?[0].submittedAt = "2026-11-25T08:00:00"
        #expect(throws: DTOMappingError(field: "votes[0].submittedAt", value: "2026-11-25T08:00:00", reason: "not an RFC 3339 date-time with an offset")) {
            _ = try broken.toDomain()
        }
        broken = Self.decision
        broken.method = "manual"
        #expect(throws: DTOMappingError(field: "result.weights", value: "present", reason: "a manual pick has no weights")) { _ = try broken.toDomain() }
    }

    @Test("a user round-trips; a bad picture URL names the field")
    func users() throws {
        let settings = UserDTO.Settings(smsEnabled: true, emailEnabled: false, pushEnabled: true, groupDecisions: .init(started: true, completed: false),
                                        friendRequests: true, groupInvites: false)
        var dto = UserDTO(_id: "u1", email: "a@example.com", name: "A", username: nil, phoneNumber: nil, profilePicture: "https://example.com/p.png",
                          city: nil, state: nil, smsOptIn: false, preferences: .init(defaultLocation: nil, notificationSettings: settings),
                          createdAt: "2026-11-25T07:00:00.000Z", updatedAt: "2026-11-25T07:00:00.000Z")
        #expect(UserDTO(try dto.toDomain()) == dto)
        dto.profilePicture = "ftp://example.com/p.png"
        #expect(throws: DTOMappingError(field: "profilePicture", value: "ftp://example.com/p.png", reason: "not an absolute http(s) URL")) { _ = try dto.toDomain() }
    }
}
