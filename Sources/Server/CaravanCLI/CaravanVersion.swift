/// What `caravan --version` prints. The version is this constant, raised by hand at a release. `scripts/release` writes
/// the commit and the build time (UTC) into its copy of this file before it builds; a development build says
/// "unknown" for both.
enum CaravanVersion {
    static let version = "0.1.0"
    static let commit = "unknown"
    static let buildDate = "unknown"

    static var description: String { "caravan \(version) (commit \(commit), built \(buildDate))" }
}
