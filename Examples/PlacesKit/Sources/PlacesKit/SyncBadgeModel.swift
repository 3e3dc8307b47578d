public import CaravanClient
public import Observation

/// The line at the bottom of the screen that says what sync is doing, from the engine's `SyncStatus`.
@MainActor
@Observable
public final class SyncBadgeModel {
    @ObservationIgnored private let observed: ObservedSyncStatus

    public init(client: PlacesClient) {
        observed = ObservedSyncStatus(client.engine.status)
    }

    public var status: SyncStatus { observed.status }

    /// What to show: the failure first (offline is not an error the user must act on), then work in progress, then
    /// writes waiting, else up to date.
    public var text: String { Self.text(for: observed.status) }

    public nonisolated static func text(for status: SyncStatus) -> String {
        let waiting = status.pending == 1 ? "1 change waiting" : "\(status.pending) changes waiting"
        if let error = status.lastError {
            if error.code == "offline" { return status.pending > 0 ? "Offline — \(waiting)" : "Offline" }
            return "Sync failed (\(error.code))"
        }
        if status.uploading || status.downloading { return "Syncing…" }
        if status.pending > 0 { return waiting }
        if status.parked > 0 { return status.parked == 1 ? "1 change refused" : "\(status.parked) changes refused" }
        return status.lastSyncedAt == nil ? "Not synced yet" : "Up to date"
    }
}
