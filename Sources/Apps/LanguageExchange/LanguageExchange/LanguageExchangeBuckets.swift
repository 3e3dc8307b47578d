package import CaravanCore

/// LangMatcher's storage buckets.
package enum LanguageExchangeBuckets {
    /// Profile images: JPEG only (checked on the bytes), at most 5 MB (5 MiB, as Supabase reads "5MB"). Public for
    /// reading, since matches and candidates see each other's photos; only the uploader (or the service role) may
    /// write or delete an image, and only under their own id (`<user_id>/…`).
    package static let avatars = BucketDeclaration("avatars", public: true, fileSizeLimit: 5 * 1024 * 1024, allowedMimeTypes: ["image/jpeg"],
                                                  pathsStartWithOwnerID: true)
}
