/// The errors of opening and copying deployments, with stable codes callers match on.
package struct DeploymentError: Error, Sendable, CustomStringConvertible {
    /// A stable, extensible error code.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        package var description: String { name }

        /// The copy source is not a deployment (no `caravan.sqlite` in the directory).
        package static let sourceMissing = Code("sourceMissing")
        /// The copy target already holds rows and `--force` was not given.
        package static let targetNotEmpty = Code("targetNotEmpty")
        /// After a copy, a table's row count or checksum differs between source and target.
        package static let checksumMismatch = Code("checksumMismatch")
        /// The operation needs another engine (e.g. a copy target that is not a database URL).
        package static let unsupportedEngine = Code("unsupportedEngine")
        /// A backup file that is not a Caravan backup, or is damaged (a missing or malformed entry).
        package static let invalidBackup = Code("invalidBackup")
        /// An outside tool the operation needs (`pg_dump`, `pg_restore`) is not installed.
        package static let toolMissing = Code("toolMissing")
        /// The output file of a backup already exists.
        package static let outputExists = Code("outputExists")
        /// An object's bytes were missing while backing up or restoring storage (removed by a replace or delete that
        /// raced the backup, or lost): take the backup again.
        package static let storageIncomplete = Code("storageIncomplete")
        /// The output file could not be created (its folder is missing or not writable).
        package static let outputUnwritable = Code("outputUnwritable")
    }

    package let code: Code
    /// What went wrong, safe to print: it names tables and paths, never values or credentials.
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "DeploymentError(\(code)): \(message)" }
}
