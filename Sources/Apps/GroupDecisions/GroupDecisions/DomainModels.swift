package import Foundation

/// The design's domain models (seeds/fork-in-the-road-data-models.md), as the app's source of truth.
package enum PriceRange: String, Sendable, Codable, CaseIterable { case budget = "$", moderate = "$$", expensive = "$$$", veryExpensive = "$$$$" }
package enum CollectionType: String, Sendable, Codable, CaseIterable { case personal, group }
package enum DecisionType: String, Sendable, Codable, CaseIterable { case personal, group }
package enum DecisionMethod: String, Sendable, Codable, CaseIterable { case random, tiered, manual }
package enum DecisionStatus: String, Sendable, Codable, CaseIterable { case active, completed, expired, closed }

package struct NotificationSettings: Sendable, Equatable {
    package var smsEnabled, emailEnabled, pushEnabled, decisionStarted, decisionCompleted, friendRequests, groupInvites: Bool
}

package struct User: Sendable, Equatable {
    package let id: String
    package let email: String
    package let name: String
    package let username: String?
    package let phoneNumber: String?
    package let profilePictureURL: URL?
    package let city: String?
    package let state: String?
    package let smsOptIn: Bool
    package let defaultLocation: String?
    package let notifications: NotificationSettings
    package let createdAt: Date
    package let updatedAt: Date
}

package struct Restaurant: Sendable, Equatable {
    package let id: String
    package let googlePlaceID: String
    package let name: String
    package let address: String
    package let latitude: Double
    package let longitude: Double
    package let cuisine: String
    package let rating: Double?
    package let priceRange: PriceRange?
    package let timeToPickUp: Int?
    package let photos: [URL]
    package let phoneNumber: String?
    package let website: URL?
    package let hours: [String: String]?
    package let cachedAt: Date
    package let lastUpdated: Date
}

package struct Collection: Sendable, Equatable {
    package let id: String
    package let name: String
    package let description: String?
    package let type: CollectionType
    package let ownerID: String
    package let restaurantIDs: [String]
    package let createdAt: Date
    package let updatedAt: Date
}

package struct Vote: Sendable, Equatable {
    package let userID: String
    package let rankings: [String]
    package let submittedAt: Date
}

package struct DecisionResult: Sendable, Equatable {
    package let restaurantID: String
    package let selectedAt: Date
    package let reasoning: String?
    package let weights: [String: Double]?
}

package struct Decision: Sendable, Equatable {
    package let id: String
    package let type: DecisionType
    package let collectionID: String
    package let groupID: String?
    package let createdBy: String?
    package let participants: [String]
    package let method: DecisionMethod
    package let status: DecisionStatus
    package let deadline: Date?
    package let visitDate: Date
    package let result: DecisionResult?
    package let votes: [Vote]?
    package let createdAt: Date
    package let updatedAt: Date
}

package struct AppNotification: Sendable, Equatable {
    package let id: String
    package let userID: String
    package let type: NotificationKind
    package let title: String
    package let message: String
    package let data: [String: String]?
    package let read: Bool
    package let createdAt: Date
    package let updatedAt: Date
}
