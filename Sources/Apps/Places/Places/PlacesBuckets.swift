public import CaravanCore

/// The places app's storage buckets.
public enum PlacesBuckets {
    /// Photos users take of the places they keep (`<user_id>/<favorite_id>.jpg`): JPEG, PNG or WebP, at most 5 MiB.
    /// Public for reading; only the uploader (or the service role) writes or deletes, under their own id.
    public static let photos = BucketDeclaration("place-photos", public: true, fileSizeLimit: 5 * 1024 * 1024,
                                                 allowedMimeTypes: ["image/jpeg", "image/png", "image/webp"], pathsStartWithOwnerID: true)
}
