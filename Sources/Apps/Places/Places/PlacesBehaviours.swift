package import CaravanCore
import Foundation

/// What the write pipeline keeps for the places app (until places-0005, triggers of places-0001 did):
/// `places.completeness_score` derived from the row, and `updated_at` of places and reviews touched by every update
/// that does not set it.
package enum PlacesBehaviours {
    package static let all = [
        TableBehaviour("places", derived: [DerivedColumn("completeness_score", compute: completenessScore)], touches: "updated_at"),
        TableBehaviour("reviews", touches: "updated_at"),
    ]

    /// The design's §7.2 score: a tenth for each of name_ar, name_en, description_ar, a positive Google rating,
    /// latitude, price_range, google_maps_url, cover_image_url, at least one tag, and neighborhood.
    @Sendable static func completenessScore(_ row: StoredRow) -> Value {
        let present = ["name_ar", "name_en", "description_ar", "latitude", "price_range", "google_maps_url", "cover_image_url", "neighborhood"]
            .filter { !row[$0].isNull }.count
        let rated = switch row["google_rating"] {
        case .double(let rating): rating > 0
        case .integer(let rating): rating > 0
        default: false
        }
        return .double(Double(present + (rated ? 1 : 0) + (hasTags(row["tags"]) ? 1 : 0)) / 10)
    }

    /// Whether a text-array value holds at least one element (a JSON array's text, as values carry arrays).
    private static func hasTags(_ value: Value) -> Bool {
        switch value {
        case .json(let text), .text(let text):
            guard case .array(let elements)? = try? JSONParser.parse(text) else { return false }
            return !elements.isEmpty
        default:
            return false
        }
    }
}
