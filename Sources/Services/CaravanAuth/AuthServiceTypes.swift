package import CaravanCore
import Foundation

/// Who is asking, as far as abuse limits care.
package struct AuthClient: Sendable, Hashable {
    package let ip: String

    package init(ip: String) { self.ip = ip }
}

/// An email or a phone number, normalized (emails trimmed and lower-cased, look-alikes as `EmailLookalikes` says —
/// by default NFKC-folded, so a full-width or other compatibility look-alike is the same account; phones as E.164
/// digits without `+`).
package enum Contact: Sendable, Hashable {
    case email(String)
    case phone(String)

    /// Normalizes and validates; `nil` when neither is given.
    package static func from(email: String?, phone: String?, lookalikes: EmailLookalikes) throws(AuthError) -> Contact? {
        if let email, !email.isEmpty { return .email(try normalizeEmail(email, lookalikes: lookalikes)) }
        if let phone, !phone.isEmpty { return .phone(try normalizePhone(phone)) }
        return nil
    }

    /// The address as stored and compared: trimmed and lower-cased; NFKC (compatibility) folded first with `fold`,
    /// refused when folding would change it with `reject` (`email_address_invalid`), NFC-composed only with `allow`
    /// (one address, one encoding). Control and format characters (NUL, bidi marks, zero-width joiners) anywhere are
    /// refused, before and after folding.
    static func normalizeEmail(_ text: String, lookalikes: EmailLookalikes) throws(AuthError) -> String {
        let invalid = AuthError.invalidField("Unable to validate email address: invalid format")
        func hasControlOrFormat(_ text: String) -> Bool {
            text.unicodeScalars.contains { scalar in
                switch scalar.properties.generalCategory {
                case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: true
                default: false
                }
            }
        }
        guard !hasControlOrFormat(text) else { throw invalid }
        let trimmed = text.trimmingSpaces, folded = trimmed.precomposedStringWithCompatibilityMapping
        let email: String
        switch lookalikes {
        case .fold:
            email = folded.lowercased()
        case .reject:
            // Scalar by scalar: Swift's `==` would call a decomposed `é` equal to its composed form.
            guard folded.unicodeScalars.elementsEqual(trimmed.unicodeScalars) else {
                throw AuthError(.emailAddressInvalid, "Email address \"\(trimmed)\" is invalid")
            }
            email = trimmed.lowercased()
        case .allow:
            email = trimmed.precomposedStringWithCanonicalMapping.lowercased()
        }
        guard !hasControlOrFormat(email) else { throw invalid }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard email.utf8.count <= 255, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
              !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              !email.contains(where: { $0.isWhitespace || $0.isNewline || "<>()[],;:\\\"".contains($0) }) else {
            throw AuthError.invalidField("Unable to validate email address: invalid format")
        }
        return email
    }

    static func normalizePhone(_ text: String) throws(AuthError) -> String {
        var digits = text.filter { !" -().".contains($0) }
        if digits.hasPrefix("+") { digits.removeFirst() }
        guard (8...15).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), !digits.hasPrefix("0") else {
            throw AuthError.invalidField("Invalid phone number format (E.164 required)")
        }
        return digits
    }

    var column: String { if case .email = self { "email" } else { "phone" } }
    var value: String { switch self { case .email(let v), .phone(let v): v } }
    var channel: MessageChannel { if case .email = self { .email } else { .sms } }
    var provider: String { if case .email = self { "email" } else { "phone" } }
    var confirmedColumn: String { if case .email = self { "email_confirmed_at" } else { "phone_confirmed_at" } }
}

/// `POST /verify`'s `type`.
package enum VerificationType: String, Sendable {
    case email, signup, magiclink, invite, recovery, sms
    case emailChange = "email_change"
    case phoneChange = "phone_change"

    /// The codes this type accepts: clients confirm a sign-up with `email` (or `sms`) as often as with `signup`.
    var purposes: [OneTimeCodePurpose] {
        switch self {
        case .email, .magiclink, .invite, .signup: [.email, .signup]
        case .sms: [.sms, .signup]
        case .recovery: [.recovery]
        case .emailChange: [.emailChange]
        case .phoneChange: [.phoneChange]
        }
    }
}

/// `POST /logout`'s scope.
package enum LogoutScope: String, Sendable {
    case global, local, others
}

/// What `PUT /user` (and the admin API) may change.
package struct UserChanges: Sendable {
    package var email: String?
    package var phone: String?
    package var password: String?
    package var userMetadata: JSONValue?
    /// Admin only.
    package var appMetadata: JSONValue?
    /// Admin only: mark the email / phone confirmed.
    package var confirmEmail = false
    package var confirmPhone = false
    /// The reauthentication nonce a password change carries (`PUT /user`'s `nonce`).
    package var nonce: String?

    package init(email: String? = nil, phone: String? = nil, password: String? = nil, userMetadata: JSONValue? = nil, appMetadata: JSONValue? = nil) {
        self.email = email
        self.phone = phone
        self.password = password
        self.userMetadata = userMetadata
        self.appMetadata = appMetadata
    }
}
