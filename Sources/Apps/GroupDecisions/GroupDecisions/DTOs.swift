package import Foundation

/// The design's API DTOs, mapped to the domain strictly (`DTOMapping`) and back (RFC 3339 with milliseconds, UTC).
package struct UserDTO: Codable, Sendable, Equatable {
    package struct Preferences: Codable, Sendable, Equatable {
        package var defaultLocation: String?
        package var notificationSettings: Settings
    }

    package struct Settings: Codable, Sendable, Equatable {
        package struct GroupDecisions: Codable, Sendable, Equatable { package var started, completed: Bool }
        package var smsEnabled, emailEnabled, pushEnabled: Bool
        package var groupDecisions: GroupDecisions
        package var friendRequests, groupInvites: Bool
    }

    package var _id: String
    package var email: String
    package var name: String
    package var username: String?
    package var phoneNumber: String?
    package var profilePicture: String?
    package var city: String?
    package var state: String?
    package var smsOptIn: Bool
    package var preferences: Preferences
    package var createdAt: String
    package var updatedAt: String

    package func toDomain() throws(DTOMappingError) -> User {
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

package struct RestaurantDTO: Codable, Sendable, Equatable {
    package struct Coordinates: Codable, Sendable, Equatable { package var lat, lng: Double }
    package var _id: String
    package var googlePlaceId: String
    package var name: String
    package var address: String
    package var coordinates: Coordinates
    package var cuisine: String
    package var rating: Double?
    package var priceRange: String?
    package var timeToPickUp: Int?
    package var photos: [String]?
    package var phoneNumber: String?
    package var website: String?
    package var hours: [String: String]?
    package var cachedAt: String
    package var lastUpdated: String

    package func toDomain() throws(DTOMappingError) -> Restaurant {
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

package struct CollectionDTO: Codable, Sendable, Equatable {
    package var _id: String
    package var name: String
    package var description: String?
    package var type: String
    package var ownerId: String
    package var restaurantIds: [String]
    package var createdAt: String
    package var updatedAt: String

    package func toDomain() throws(DTOMappingError) -> Collection {
        Collection(id: _id, name: name, description: description, type: try DTOMapping.enumValue(type, CollectionType.self, field: "type"),
                   ownerID: ownerId, restaurantIDs: restaurantIds,
                   createdAt: try DTOMapping.date(createdAt, field: "createdAt"), updatedAt: try DTOMapping.date(updatedAt, field: "updatedAt"))
    }
}

package struct NotificationDTO: Codable, Sendable, Equatable {
    package var _id: String
    package var userId: String
    package var type: String
    package var title: String
    package var message: String
    package var data: [String: String]?
    package var read: Bool
    package var createdAt: String
    package var updatedAt: String

    package func toDomain() throws(DTOMappingError) -> AppNotification {
        AppNotification(id: _id, userID: userId, type: try DTOMapping.enumValue(type, NotificationKind.self, field: "type"), title: title,
                        message: message, data: data, read: read,
                        createdAt: try DTOMapping.date(createdAt, field: "createdAt"), updatedAt: try DTOMapping.date(updatedAt, field: "updatedAt"))
    }
}

extension DTOMapping {
    /// RFC 3339 in UTC with milliseconds (`2026-11-25T12:00:00.250Z`): what `toDTO` writes and `date(_:field:)` reads back.
    package static func format(_ date: Date) -> String {
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
    package init(_ user: User) {
        let n = user.notifications
        _id = user.id; email = user.email; name = user.name; username = user.username; phoneNumber = user.phoneNumber
        profilePicture = user.profilePictureURL?.absoluteString; city = user.city; state = user.state; smsOptIn = user.smsOptIn
        preferences = Preferences(defaultLocation: user.defaultLocation, notificationSettings: Settings(
            smsEnabled: n.smsEnabled, emailEnabled: n.emailEnabled, pushEnabled: n.pushEnabled,
            groupDecisions: .init(started: n.decisionStarted, completed: n.decisionCompleted), friendRequests: n.friendRequests, groupInvites: n.groupInvites))
        createdAt = DTOMapping.format(user.createdAt); updatedAt = DTOMapping.format(user.updatedAt)
    }
}
