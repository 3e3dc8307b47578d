public import Foundation

/// The design's domain models (seeds/fork-in-the-road-data-models.md), as the app's source of truth.
public enum PriceRange: String, Sendable, Codable, CaseIterable { case budget = "$", moderate = "$$", expensive = "$$$", veryExpensive = "$$$$" }
public enum CollectionType: String, Sendable, Codable, CaseIterable { case personal, group }
public enum DecisionType: String, Sendable, Codable, CaseIterable { case personal, group }
public enum DecisionMethod: String, Sendable, Codable, CaseIterable { case random, tiered, manual }
public enum DecisionStatus: String, Sendable, Codable, CaseIterable { case active, completed, expired, closed }

public struct NotificationSettings: Sendable, Equatable {
    public var smsEnabled, emailEnabled, pushEnabled, decisionStarted, decisionCompleted, friendRequests, groupInvites: Bool
}

public struct User: Sendable, Equatable {
    public let id: String
    public let email: String
    public let name: String
    public let username: String?
    public let phoneNumber: String?
    public let profilePictureURL: URL?
    public let city: String?
    public let state: String?
    public let smsOptIn: Bool
    public let defaultLocation: String?
    public let notifications: NotificationSettings
    public let createdAt: Date
    public let updatedAt: Date
}

public struct Restaurant: Sendable, Equatable {
    public let id: String
    public let googlePlaceID: String
    public let name: String
    public let address: String
    public let latitude: Double
    public let longitude: Double
    public let cuisine: String
    public let rating: Double?
    public let priceRange: PriceRange?
    public let timeToPickUp: Int?
    public let photos: [URL]
    public let phoneNumber: String?
    public let website: URL?
    public let hours: [String: String]?
    public let cachedAt: Date
    public let lastUpdated: Date
}

public struct Collection: Sendable, Equatable {
    public let id: String
    public let name: String
    public let description: String?
    public let type: CollectionType
    public let ownerID: String
    public let restaurantIDs: [String]
    public let createdAt: Date
    public let updatedAt: Date
}

public struct Vote: Sendable, Equatable {
    public let userID: String
    public let rankings: [String]
    public let submittedAt: Date
}

public struct DecisionResult: Sendable, Equatable {
    public let restaurantID: String
    public let selectedAt: Date
    public let reasoning: String?
    public let weights: [String: Double]?
}

public struct Decision: Sendable, Equatable {
    public let id: String
    public let type: DecisionType
    public let collectionID: String
    public let groupID: String?
    public let createdBy: String?
    public let participants: [String]
    public let method: DecisionMethod
    public let status: DecisionStatus
    public let deadline: Date?
    public let visitDate: Date
    public let result: DecisionResult?
    public let votes: [Vote]?
    public let createdAt: Date
    public let updatedAt: Date
}

public struct AppNotification: Sendable, Equatable {
    public let id: String
    public let userID: String
    public let type: NotificationKind
    public let title: String
    public let message: String
    public let data: [String: String]?
    public let read: Bool
    public let createdAt: Date
    public let updatedAt: Date
}
