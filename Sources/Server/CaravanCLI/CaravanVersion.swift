/// What `caravan --version` prints. The version is this constant, raised by hand at a release; the commit and the
/// build date are not captured at build time (SwiftPM has no plain way to pass them in without a plugin), so they
/// read "unknown"; a release build may rewrite `commit` and `buildDate` here before building.
enum CaravanVersion {
    static let version = "0.1.0"
    static let commit = "unknown"
    static let buildDate = "unknown"

    static var description: String { "caravan \(version) (commit \(commit), built \(buildDate))" }
}
