/// A storage bucket an app module needs (`AppModule.buckets`), with its limits: LangMatcher's `avatars` takes JPEG
/// images of at most 5 MB. `caravan serve` creates a declared bucket that does not exist yet.
public struct BucketDeclaration: Sendable, Hashable {
    /// The bucket's id and name (`avatars`).
    public let id: String
    /// Whether anyone may read its objects (`/storage/v1/object/public/…`, and reads by any caller).
    public let isPublic: Bool
    /// The largest object in bytes, or nil for the server's limit.
    public let fileSizeLimit: Int64?
    /// The MIME types an object may have (`image/jpeg`, `image/*`), checked on the bytes; nil for any.
    public let allowedMimeTypes: [String]?
    /// Object paths start with their owner's user id (`<user_id>/me.jpg`): a user may write only under their own id,
    /// so nobody can take another user's path first — storage's object policies say so (`PolicyRule.inOwnerFolder`),
    /// for uploads, upserts, moves and copies alike. The service role writes anywhere.
    public let pathsStartWithOwnerID: Bool
    /// Active content (HTML, SVG, XML, JavaScript) is served inline with its own type. Off, it is served as an
    /// attachment with a sandboxing `Content-Security-Policy`, so an upload cannot run script on the API's origin.
    public let servesActiveContent: Bool

    public init(_ id: String, public isPublic: Bool = false, fileSizeLimit: Int64? = nil, allowedMimeTypes: [String]? = nil,
                pathsStartWithOwnerID: Bool = false, servesActiveContent: Bool = false) {
        self.id = id
        self.isPublic = isPublic
        self.fileSizeLimit = fileSizeLimit
        self.allowedMimeTypes = allowedMimeTypes
        self.pathsStartWithOwnerID = pathsStartWithOwnerID
        self.servesActiveContent = servesActiveContent
    }
}
