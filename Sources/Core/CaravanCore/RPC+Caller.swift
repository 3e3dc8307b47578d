/// The errors an app's RPC functions throw for a bad call: stable codes, the field (and value) named in `details`.
extension CaravanError {
    /// 22023: an argument is outside what the function accepts.
    public static func invalidArgument(_ field: String, _ value: String?, _ message: String) -> CaravanError {
        CaravanError(.invalidParameterValue, "\(field): \(message)", details: "field \(field)" + (value.map { ", value \($0)" } ?? ""))
    }

    /// 42501: the caller may not do this.
    public static func denied(_ field: String, _ message: String) -> CaravanError {
        CaravanError(.permissionDenied, "\(field): \(message)", details: "field \(field)")
    }
}

extension StoreTransaction {
    /// The signed-in caller's id, or 42501 naming `function` when the caller is anonymous or the service role.
    public func requireCaller(_ function: String) throws(CaravanError) -> String {
        guard access.identity.role == .authenticated, let id = access.identity.userID else {
            throw CaravanError(.permissionDenied, "permission denied for function \(function)", hint: "sign in first")
        }
        return id
    }
}
