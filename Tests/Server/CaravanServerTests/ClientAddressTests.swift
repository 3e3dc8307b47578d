@testable import CaravanServer
import Testing

@Suite("Client addresses for abuse limits")
struct ClientAddressTests {
    @Test(arguments: [
        ("192.0.2.7", "192.0.2.7"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"),
        ("2001:db8::1", "2001:db8:0:0::/64"),
        ("::1", "0:0:0:0::/64"),
    ])
    func ipv6AddressesCountByTheirSlash64(address: String, key: String) {
        #expect(AuthController.rateLimitKey(address) == key)
    }
}
