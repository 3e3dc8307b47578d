package import CaravanCore

/// A second factor of a user, as GoTrue's Factor object shows it in `user.factors` (never its secret).
package struct MFAFactor: Sendable {
    package let id: String
    package let userID: String
    package let friendlyName: String?
    package let factorType: String
    package let status: String
    let secret: String
    let lastUsedStep: Int64?
    package let createdAt: String
    package let updatedAt: String

    /// Decodes an `auth_mfa_factors` row; throws `unexpected_failure` on corrupt data.
    init(_ record: Record) throws(AuthError) {
        id = try record.requireText("id")
        userID = try record.requireText("user_id")
        friendlyName = record.text("friendly_name")
        factorType = try record.requireText("factor_type")
        status = try record.requireText("status")
        secret = try record.requireText("secret")
        if case .integer(let step)? = record.values["last_used_step"] { lastUsedStep = step } else { lastUsedStep = nil }
        createdAt = try record.requireText("created_at")
        updatedAt = try record.requireText("updated_at")
    }

    package var isVerified: Bool { status == "verified" }

    package var json: JSONValue {
        .object([
            ("id", .string(id)),
            ("friendly_name", .string(friendlyName ?? "")),
            ("factor_type", .string(factorType)),
            ("status", .string(status)),
            ("created_at", .string(createdAt)),
            ("updated_at", .string(updatedAt)),
        ])
    }
}
