import CaravanCore
@testable import CaravanServer
import HTTPTypes
import Testing

/// A failed upstream service (LanguageExchange's translation provider) is 502 with its own wire code, for any role.
@Suite struct UpstreamFailureMappingTests {
    @Test(arguments: [Role.anon, .authenticated, .serviceRole])
    func upstreamFailureIsBadGateway(role: Role) {
        let (status, code) = PostgRESTError.status(for: .upstreamFailure, role: role)
        #expect(status == .badGateway)
        #expect(code == "CARAVAN_UPSTREAM_FAILURE")
    }
}
