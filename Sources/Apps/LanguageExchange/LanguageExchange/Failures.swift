import CaravanCore

/// The module's errors beyond `CaravanError.invalidArgument` and `.denied`: stable codes, the field (and value) named
/// in `details`.
enum Failure {
    /// 23514: a row breaks a rule of the design (a bad language code, a bad direction, a self-swipe).
    static func check(_ field: String, _ message: String, value: String? = nil) -> CaravanError {
        CaravanError(.checkViolation, "\(field): \(message)", details: "field \(field)" + (value.map { ", value \($0)" } ?? ""))
    }
}

extension StoreTransaction {
    /// 42501 unless `parameter` (a user id argument) is the caller.
    func requireCaller(_ function: String, is argument: Value, parameter: String) throws -> String {
        let caller = try requireCaller(function)
        guard argument.textValue.flatMap(ColumnType.canonicalUUID) == caller else {
            throw CaravanError.denied(parameter, "must be the caller's own id")
        }
        return caller
    }
}
