package import CaravanCore
import Synchronization

/// The last `capacity` requests the server answered (the admin console's request-log tail), in memory only: method,
/// path, status, duration, time and the caller's role. Nothing secret goes in: no header is kept, and the values of
/// query parameters that may carry a credential (`apikey`, `token`, `password`, …) are replaced by `…`.
/// One ring per server, passed in with `CaravanServices` (the console reads it at `GET /admin/api/requests`).
package final class RecentRequests: Sendable {
    package struct Entry: Sendable, Hashable {
        /// Increasing from 1: the console asks for the entries after the last one it has.
        package let id: Int64
        /// Microseconds since 1970.
        package let time: Int64
        package let method: String
        /// The path with its redacted query string.
        package let path: String
        package let status: Int
        package let durationMicroseconds: Int64
        /// `anon`, `authenticated` or `service_role`; nil when the request carried no valid key.
        package let role: Role?
    }

    package static let defaultCapacity = 200
    /// Longer paths are cut (with `…`): the log is for reading, not for replaying requests.
    package static let maxPathLength = 300

    package let capacity: Int
    private let clock: WallClock
    private let state = Mutex(State())

    private struct State {
        var entries: [Entry] = []
        var start = 0
        var lastID: Int64 = 0
    }

    package init(capacity: Int = RecentRequests.defaultCapacity, clock: WallClock = .system) {
        self.capacity = max(1, capacity)
        self.clock = clock
    }

    /// Keeps one answered request, dropping the oldest when the ring is full.
    package func record(method: String, path: String, query: String?, status: Int, durationMicroseconds: Int64, role: Role?) {
        let time = clock.microseconds
        let shown = Self.redacted(path: path, query: query)
        state.withLock { state in
            state.lastID += 1
            let entry = Entry(id: state.lastID, time: time, method: method, path: shown, status: status,
                              durationMicroseconds: durationMicroseconds, role: role)
            if state.entries.count < capacity {
                state.entries.append(entry)
            } else {
                state.entries[state.start] = entry
                state.start = (state.start + 1) % capacity
            }
        }
    }

    /// The kept entries, oldest first; with `after`, only those whose id is greater.
    package func entries(after: Int64? = nil) -> [Entry] {
        let all = state.withLock { state in Array(state.entries[state.start...] + state.entries[..<state.start]) }
        guard let after else { return all }
        return all.filter { $0.id > after }
    }

    /// Query parameter names whose values are never kept (compared lowercased, as substrings).
    static let secretNames = ["key", "token", "secret", "password", "code", "sig", "otp", "jwt", "auth", "session", "nonce"]

    /// `path?query` with the value of every parameter whose name suggests a credential replaced by `…`, cut to
    /// `maxPathLength` characters.
    package static func redacted(path: String, query: String?) -> String {
        var text = path
        if let query, !query.isEmpty {
            let parts = query.split(separator: "&", omittingEmptySubsequences: false).map { part -> String in
                let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(pieces[0])
                let lowered = name.lowercased()
                guard pieces.count == 2, secretNames.contains(where: { lowered.contains($0) }) else { return String(part) }
                return name + "=…"
            }
            text += "?" + parts.joined(separator: "&")
        }
        return text.count > maxPathLength ? String(text.prefix(maxPathLength)) + "…" : text
    }
}

/// Where `APIKeyMiddleware` notes the role it verified, for `RequestLogMiddleware` (which runs outside it) to
/// record with the request.
package final class RequestRoleNote: Sendable {
    private let role = Mutex<Role?>(nil)

    package init() {}

    package var value: Role? {
        get { role.withLock { $0 } }
        set { role.withLock { $0 = newValue } }
    }
}
