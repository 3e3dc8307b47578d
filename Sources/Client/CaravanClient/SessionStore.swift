import CaravanCore
public import Foundation
#if canImport(Security)
import Security
#endif

/// Where the signed-in session is kept between launches. `SessionManager` reads and writes it through this protocol:
/// the Keychain on Apple platforms (`KeychainSessionStore`), a file only its owner can read on Linux
/// (`FileSessionStore`), or the local store's own table (`LocalStore`, the default of `SessionManager(store:…)`).
public protocol SessionStore: Sendable {
    /// The stored session, or nil when signed out.
    func loadSession() throws -> ClientSession?
    /// Replaces the stored session; nil signs out.
    func saveSession(_ session: ClientSession?) throws
}

extension LocalStore: SessionStore {
    public func loadSession() throws -> ClientSession? { try session() }
}

/// The session in a JSON file with mode 0600 (read and written by its owner only), replaced atomically: a crash
/// mid-save leaves the old session or the new one, never half of one. Signing out removes the file.
public struct FileSessionStore: SessionStore {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public func loadSession() throws -> ClientSession? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try ClientSession(stored: data, from: "the session file \(path)")
    }

    public func saveSession(_ session: ClientSession?) throws {
        guard let session else {
            do {
                if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
            } catch {
                throw ClientError(.local, code: "session_unwritable", "the session file \(path) could not be removed: \(error)")
            }
            return
        }
        // The new file is made 0600 before a byte is written to it, then renamed over the old one.
        let temporary = path + ".\(UUID().uuidString).tmp"
        let bytes = Data(session.json.jsonText.utf8)
        guard FileManager.default.createFile(atPath: temporary, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw ClientError(.local, code: "session_unwritable", "the session file \(temporary) could not be created")
        }
        do {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: temporary))
            defer { try? handle.close() }
            try handle.write(contentsOf: bytes)
            try handle.synchronize()
            if rename(temporary, path) != 0 { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            // The rename is durable once the folder is: without this a power loss may bring the old session back.
            let folder = open((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent, O_RDONLY)
            if folder >= 0 {
                _ = fsync(folder)
                _ = close(folder)
            }
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw ClientError(.local, code: "session_unwritable", "the session file \(path) could not be written: \(error)")
        }
    }
}

#if canImport(Security)
/// The session in the Keychain (a generic password item of `service` and `account`), shared with the app's
/// extensions through `accessGroup` (a Keychain access group they all have). Readable after the first unlock, so
/// background syncs and widgets can use it.
public struct KeychainSessionStore: SessionStore {
    public let service: String
    public let account: String
    public let accessGroup: String?

    public init(service: String, account: String = "session", accessGroup: String? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
    }

    private var query: [String: Any] {
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                    kSecAttrAccount as String: account]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    public func loadSession() throws -> ClientSession? {
        var search = query
        search[kSecReturnData as String] = true
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(search as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else {
            throw ClientError(.local, code: "session_unreadable", "the Keychain refused the session (OSStatus \(status))")
        }
        return try ClientSession(stored: data, from: "the Keychain item")
    }

    /// Replaces the item in place (`SecItemUpdate`, else `SecItemAdd`): a failure or a kill midway keeps the old
    /// session rather than none, which matters just after a refresh token rotated. (Compiled on Apple platforms only:
    /// the Linux suite tests `FileSessionStore`.)
    public func saveSession(_ session: ClientSession?) throws {
        guard let session else {
            let deleted = SecItemDelete(query as CFDictionary)
            guard deleted == errSecSuccess || deleted == errSecItemNotFound else {
                throw ClientError(.local, code: "session_unwritable", "the Keychain refused to remove the session (OSStatus \(deleted))")
            }
            return
        }
        let value: [String: Any] = [kSecValueData as String: Data(session.json.jsonText.utf8),
                                    kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly]
        var status = SecItemUpdate(query as CFDictionary, value as CFDictionary)
        if status == errSecItemNotFound {
            status = SecItemAdd(query.merging(value) { _, new in new } as CFDictionary, nil)
        }
        guard status == errSecSuccess else {
            throw ClientError(.local, code: "session_unwritable", "the Keychain refused the session (OSStatus \(status))")
        }
    }
}
#endif

extension ClientSession {
    /// The stored form of a session (the fields of GoTrue's reply that the SDK keeps).
    var json: JSONValue {
        .object([("access_token", .string(accessToken)), ("refresh_token", .string(refreshToken)), ("expires_at", .integer(expiresAt)),
                 ("user_id", .string(userID))])
    }

    /// The session `json` stored in `data`; anything else is `session_unreadable`, naming `source`.
    init(stored data: Data, from source: String) throws {
        let json = try? JSONParser.parse(String(decoding: data, as: UTF8.self))
        guard case .string(let access)? = json?["access_token"], case .string(let refresh)? = json?["refresh_token"],
              case .integer(let expiresAt)? = json?["expires_at"], case .string(let user)? = json?["user_id"] else {
            throw ClientError(.local, code: "session_unreadable",
                              "\(source) is not a session (access_token, refresh_token, expires_at and user_id)")
        }
        self.init(accessToken: access, refreshToken: refresh, expiresAt: expiresAt, userID: user)
    }
}
