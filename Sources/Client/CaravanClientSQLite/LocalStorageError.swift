/// What the on-device store refuses, by cause; the client SDK turns each into its `ClientError.local`.
package enum LocalStorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A value does not fit its column's declared type.
    case badValue(column: String, String)
    /// A row with that primary key is already stored.
    case duplicateKey(table: String)
    /// A condition or rule names a column the table does not declare.
    case unknownColumn(table: String, column: String)
    /// A read the on-device store does not run.
    case unsupported(String)
    /// A file beside the store (the sync lock) could not be opened or locked.
    case fileFailure(String)

    package var description: String {
        switch self {
        case .badValue(_, let message): message
        case .duplicateKey(let table): "a local \(table) row with that key exists already"
        case .unknownColumn(let table, let column): "\(table) has no column \(column)"
        case .unsupported(let message): message
        case .fileFailure(let message): message
        }
    }
}
