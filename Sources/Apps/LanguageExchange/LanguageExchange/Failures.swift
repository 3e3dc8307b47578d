import CaravanCore

/// The module's errors: stable codes, the field (and value) named in `details`.
enum Failure {
    /// 23514: a row breaks a rule of the design (a bad language code, a bad direction, a self-swipe).
    static func check(_ field: String, _ message: String, value: String? = nil) -> CaravanError {
        CaravanError(.checkViolation, "\(field): \(message)", details: "field \(field)" + (value.map { ", value \($0)" } ?? ""))
    }

    /// 22023: an argument is outside what the function accepts.
    static func invalid(_ field: String, _ value: String?, _ message: String) -> CaravanError {
        CaravanError(.invalidParameterValue, "\(field): \(message)", details: "field \(field)" + (value.map { ", value \($0)" } ?? ""))
    }

    /// 42501: the caller may not do this.
    static func denied(_ field: String, _ message: String) -> CaravanError {
        CaravanError(.permissionDenied, "\(field): \(message)", details: "field \(field)")
    }
}

extension StoreTransaction {
    /// The signed-in caller's id, or 42501.
    func requireCaller(_ function: String) throws -> String {
        guard access.identity.role == .authenticated, let id = access.identity.userID else {
            throw CaravanError(.permissionDenied, "permission denied for function \(function)", hint: "sign in first")
        }
        return id
    }

    /// 42501 unless `parameter` (a user id argument) is the caller.
    func requireCaller(_ function: String, is argument: Value, parameter: String) throws -> String {
        let caller = try requireCaller(function)
        guard argument.textValue.flatMap(ColumnType.canonicalUUID) == caller else {
            throw Failure.denied(parameter, "must be the caller's own id")
        }
        return caller
    }
}
