import CaravanStorage
import Testing

@Suite struct ActiveContentTests {
    @Test(arguments: ["text/html", "TEXT/HTML; charset=utf-8", "image/svg+xml", "application/xhtml+xml", "application/xml",
                      "text/xml", "application/atom+xml", "text/javascript", "application/javascript", "application/x-javascript",
                      "application/ecmascript"])
    func activeTypes(contentType: String) {
        #expect(ActiveContent.isActive(contentType))
    }

    @Test(arguments: ["image/jpeg", "image/png", "text/plain", "text/plain; charset=utf-8", "application/json",
                      "application/octet-stream", "application/pdf", "video/mp4", ""])
    func passiveTypes(contentType: String) {
        #expect(!ActiveContent.isActive(contentType))
    }
}
