package import CoreMetrics

/// How far the change listener is: `caravan_changelog_listener_seq` (the last `seq` it published) and
/// `caravan_changelog_listener_lag` (entries announced by NOTIFY, by any instance, that it has not published yet).
package struct ChangeListenerMetrics: Sendable {
    let delivered: Gauge
    let lag: Gauge

    package init(factory: any MetricsFactory) {
        delivered = Gauge(label: "caravan_changelog_listener_seq", dimensions: [], factory: factory)
        lag = Gauge(label: "caravan_changelog_listener_lag", dimensions: [], factory: factory)
    }

    func report(delivered seq: Int64, announced: Int64) {
        delivered.record(seq)
        lag.record(max(0, announced - seq))
    }
}
