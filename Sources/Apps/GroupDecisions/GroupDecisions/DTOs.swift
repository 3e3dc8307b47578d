public import Foundation

/// The design's API DTOs, mapped to the domain strictly (`DTOMapping`) and back (RFC 3339 with milliseconds, UTC).
public struct UserDTO: Codable, Sendable, Equatable {
    public struct Preferences: Codable, Sendable, Equatable {
        public var defaultLocation: String?
        public var notificationSettings: Settings
    }

    public struct Settings: Codable, Sendable, Equatable {
        public struct GroupDecisions: Codable, Sendable, Equatable { public var started, completed: Bool }
        public var smsEnabled, emailEnabled, pushEnabled: Bool
        public var groupDecisions: GroupDecisions
        public var friendRequests, groupInvites: Bool
    }

    public var _id: String
    public var email: String
    public var name: String
    public var username: String?
    public var phoneNumber: String?
    public var profilePicture: String?
    public var city: String?
    public var state: String?
    public var smsOptIn: Bool
    public var preferences: Preferences
    public var createdAt: String
    public var updatedAt: String

    public func toDomain() throws(DTOMappingError) -> User {
        let s = preferences.notificationSettings
        return User(id: _id, email: email, name: name, username: username, phoneNumber: phoneNumber,
                    profilePictureURL: try DTOMapping.url(profilePicture, field: "profilePicture"), city: city, state: state, smsOptIn: smsOptIn,
                    defaultLocation: preferences.defaultLocation,
                    notifications: NotificationSettings(smsEnabled: s.smsEnabled, emailEnabled: s.emailEnabled, pushEnabled: s.pushEnabled,
                                                        decisionStarted: s.groupDecisions.started, decisionCompleted: s.groupDecisions.completed,
                                                        friendRequests: s.friendRequests, groupInvites: s.groupInvites),
                    createdAt: try DTOMapping.date(createdAt, field: "createdAt"), updatedAt: try DTOMapping.date(updatedAt, field: "updatedAt"))
    }
}

public struct RestaurantDTO: Codable, Sendable, Equatable {
    public struct Coordinates: Codable, Sendable, Equatable { public var lat, lng: Double }
    public var _id: String
    public var googlePlaceId: String
    public var name: String
    public var address: String
    public var coordinates: Coordinates
    public var cuisine: String
    public var rating: Double?
    public var priceRange: String?
    public var timeToPickUp: Int?
    public var photos: [String]?
    public var phoneNumber: String?
    public var website: String?
    public var hours: [String: String]?
    public var cachedAt: String
    public var lastUpdated: String

    public func toDomain() throws(DTOMappingError) -> Restaurant {
        if let rating, !(0...5).contains(rating) { throw DTOMappingError(field: "rating", value: String(rating), reason: "outside 0–5") }
        if let timeToPickUp, timeToPickUp < 0 { throw DTOMappingError(field: "timeToPickUp", value: String(timeToPickUp), reason: "negative") }
        var photoURLs: [URL] = []
        for (index, photo) in (photos ?? []).enumerated() { photoURLs.append(try DTOMapping.url(photo, field: "photos[\(index)]")) }
        return Restaurant(id: _id, googlePlaceID: googlePlaceId, name: name, address: address, latitude: coordinates.lat, longitude: coordinates.lng,
                          cuisine: cuisine, rating: rating,
                          priceRange: try priceRange.map { raw throws(DTOMappingError) in try DTOMapping.enumValue(raw, PriceRange.self, field: "priceRange") },
                          timeToPickUp: timeToPickUp, photos: photoURLs, phoneNumber: phoneNumber,
                          website: try DTOMapping.url(website, field: "website"), hours: hours,
                          cachedAt: try DTOMapping.date(cachedAt, field: "cachedAt"), lastUpdated: try DTOMapping.date(lastUpdated, field: "lastUpdated"))
    }
}

public struct CollectionDTO: Codable, Sendable, Equatable {
    public var _id: String
    public var name: String
    public var description: String?
    public var type: String
    public var ownerId: String
    public var restaurantIds: [String]
    public var createdAt: String
    public var updatedAt: String

    public func toDomain() throws(DTOMappingError) -> Collection {
        Collection(id: _id, name: name, description: description, type: try DTOMapping.enumValue(type, CollectionType.self, field: "type"),
                   ownerID: ownerId, restaurantIDs: restaurantIds,
                   createdAt: try DTOMapping.date(createdAt, field: "createdAt"), updatedAt: try DTOMapping.date(updatedAt, field: "updatedAt"))
    }
}

public struct NotificationDTO: Codable, Sendable, Equatable {
    public var _id: String
    public var userId: String
    public var type: String
    public var title: String
    public var message: String
    public var data: [String: String]?
    public var read: Bool
    public var createdAt: String
    public var updatedAt: String

    public func toDomain() throws(DTOMappingError) -> AppNotification {
        AppNotification(id: _id, userID: userId, type: try DTOMapping.enumValue(type, NotificationKind.self, field: "type"), title: title,
                        message: message, data: data, read: read,
                        createdAt: try DTOMapping.date(createdAt, field: "createdAt"), updatedAt: try DTOMapping.date(updatedAt, field: "updatedAt"))
    }
}

extension DTOMapping {
    /// RFC 3339 in UTC with milliseconds (`2026-11-25T12:00:00.250Z`): what `toDTO` writes and `date(_:field:)` reads back.
    public static func format(_ date: Date) -> String {
        let millisecondsSince1970 = (date.timeIntervalSince1970 * 1000).rounded()
        let seconds = Int64((millisecondsSince1970 / 1000).rounded(.down))
        let milliseconds = Int(millisecondsSince1970 - Double(seconds) * 1000)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: Double(seconds)))
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))T\(pad(c.hour, 2)):\(pad(c.minute, 2)):\(pad(c.second, 2)).\(pad(milliseconds, 3))Z"
    }
}

extension UserDTO {
    /// The DTO of a domain value (dates as RFC 3339 UTC with milliseconds).
    public init(_ user: User) {
        let n = user.notifications
        _id = user.id; email = user.email; name = user.name; username = user.username; phoneNumber = user.phoneNumber
        profilePicture = user.profilePictureURL?.absoluteString; city = user.city; state = user.state; smsOptIn = user.smsOptIn
        preferences = Preferences(defaultLocation: user.defaultLocation, notificationSettings: Settings(
            smsEnabled: n.smsEnabled, emailEnabled: n.emailEnabled, pushEnabled: n.pushEnabled,
            groupDecisions: .init(started: n.decisionStarted, completed: n.decisionCompleted), friendRequests: n.friendRequests, groupInvites: n.groupInvites))
        createdAt = DTOMapping.format(user.createdAt); updatedAt = DTOMapping.format(user.updatedAt)
    }
}
