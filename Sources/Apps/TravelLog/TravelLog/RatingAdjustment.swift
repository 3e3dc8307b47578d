/// The design's "smart rating adjustment when deleting cities", with the rule made precise.
///
/// When a visited city with a rating > 0 is removed, the user's remaining visited cities with a rating > 0 (n of
/// them) are re-spread so the scale stays intact:
/// - n = 1: the one city gets 10;
/// - 2 ≤ n ≤ 4: sorted by (rating, created_at, city_id), the i-th (from 0) gets 1 + 9·i/(n−1) (so 1 … 10);
/// - n ≥ 5: when the highest rating m is below 10, each rating r becomes min(10, r·10/m); otherwise nothing changes.
/// Removing a bucket-list row or an unrated one changes nothing (the caller does not call this).
package enum RatingAdjustment {
    /// One remaining rated city of the user.
    package struct RatedCity: Sendable, Hashable {
        package let cityID: Int64
        package let rating: Double
        /// The row's `created_at` (canonical UTC text: sorts as time).
        package let createdAt: String

        package init(cityID: Int64, rating: Double, createdAt: String) {
            self.cityID = cityID
            self.rating = rating
            self.createdAt = createdAt
        }
    }

    /// A rating that changes.
    package struct Change: Sendable, Hashable {
        package let cityID: Int64
        package let old: Double
        package let new: Double
    }

    /// The new ratings of `remaining` (every rated, visited city left), only those that change, by city id.
    package static func adjust(_ remaining: [RatedCity]) -> [Change] {
        let rated = remaining.filter { $0.rating > 0 }
        let n = rated.count
        var result: [Change] = []
        switch n {
        case 0:
            return []
        case 1:
            result = [Change(cityID: rated[0].cityID, old: rated[0].rating, new: 10)]
        case 2...4:
            let ordered = rated.sorted { ($0.rating, $0.createdAt, $0.cityID) < ($1.rating, $1.createdAt, $1.cityID) }
            for (i, city) in ordered.enumerated() {
                result.append(Change(cityID: city.cityID, old: city.rating, new: 1 + 9 * Double(i) / Double(n - 1)))
            }
        default:
            guard let highest = rated.map(\.rating).max(), highest < 10 else { return [] }
            result = rated.map { Change(cityID: $0.cityID, old: $0.rating, new: min(10, $0.rating * 10 / highest)) }
        }
        return result.filter { $0.old != $0.new }.sorted { $0.cityID < $1.cityID }
    }
}
