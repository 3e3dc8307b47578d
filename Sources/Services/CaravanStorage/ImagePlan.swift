/// The size a render produces from a source of a given size: worked out here, so that libvips is only told "scale to
/// exactly this" or "cover this box and cut it". As imgproxy (Supabase's renderer) by default, an image is never
/// enlarged: a box larger than the source gives the source's size, or a smaller box of the asked aspect ratio.
package struct ImagePlan: Sendable, Hashable {
    package let width: Int
    package let height: Int
    /// Cover: scale to cover `width` x `height`, then cut around the centre. Otherwise scale to exactly that size.
    package let crop: Bool

    package init(width: Int, height: Int, crop: Bool) {
        self.width = width
        self.height = height
        self.crop = crop
    }

    /// The plan for `transform` on a source `sourceWidth` x `sourceHeight` pixels (as displayed: after its EXIF
    /// orientation), both at least 1.
    package init(_ transform: ImageTransform, sourceWidth: Int, sourceHeight: Int) {
        let sw = Double(max(sourceWidth, 1)), sh = Double(max(sourceHeight, 1))
        func pixels(_ value: Double) -> Int { max(1, Int((value).rounded())) }
        switch (transform.width.map(Double.init), transform.height.map(Double.init)) {
        case (nil, nil):
            self.init(width: Int(sw), height: Int(sh), crop: false)
        case (let w?, nil):
            let scale = min(1, w / sw)
            self.init(width: pixels(sw * scale), height: pixels(sh * scale), crop: false)
        case (nil, let h?):
            let scale = min(1, h / sh)
            self.init(width: pixels(sw * scale), height: pixels(sh * scale), crop: false)
        case (let w?, let h?):
            switch transform.resize {
            case .contain:
                let scale = min(1, w / sw, h / sh)
                self.init(width: pixels(sw * scale), height: pixels(sh * scale), crop: false)
            case .fill:
                // The box's aspect ratio, shrunk until neither side is larger than the source's.
                let shrink = max(1, w / sw, h / sh)
                self.init(width: pixels(w / shrink), height: pixels(h / shrink), crop: false)
            case .cover:
                let scale = min(1, max(w / sw, h / sh))
                self.init(width: min(Int(w), pixels(sw * scale)), height: min(Int(h), pixels(sh * scale)), crop: true)
            }
        }
    }
}
