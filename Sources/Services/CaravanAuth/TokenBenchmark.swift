package import CaravanCore

/// The timing harness for token verification (BENCHMARKS.md; `caravan keys bench`): what a REST request pays to
/// turn a Bearer token into an identity, first sight (signature + claims) and repeated (the verifier's cache).
package enum TokenBenchmark {
    package struct Report: Sendable {
        package let uncachedMicroseconds: [Double]
        package let cachedMicroseconds: [Double]

        package var jsonValue: JSONValue {
            func summary(_ samples: [Double]) -> JSONValue {
                let sorted = samples.sorted()
                func at(_ q: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
                return .object([("samples", .integer(Int64(sorted.count))), ("p50_us", .double(at(0.5))), ("p90_us", .double(at(0.9))),
                                ("p99_us", .double(at(0.99))), ("mean_us", .double(sorted.reduce(0, +) / Double(max(sorted.count, 1))))])
            }
            return .object([("uncached", summary(uncachedMicroseconds)), ("cached", summary(cachedMicroseconds))])
        }
    }

    /// Signs `samples` distinct access tokens shaped like auth's, then verifies each once (uncached) and one of
    /// them `samples` times (cached).
    package static func run(secret: SigningSecret, samples: Int, now: Int64) async throws -> Report {
        let verifier = await TokenVerifier(secret: secret, now: { now })
        var tokens: [String] = []
        for n in 0..<samples {
            tokens.append(try await verifier.issueToken(claims: .object([
                ("aud", .string("authenticated")), ("exp", .integer(now + 3600)), ("iat", .integer(now)), ("iss", .string("http://bench/auth/v1")),
                ("sub", .string("00000000-0000-4000-8000-\(String(String(n, radix: 16)).leftPadded(to: 12))")), ("email", .string("user\(n)@example.com")),
                ("phone", .string("")), ("app_metadata", .object([("provider", .string("email")), ("providers", .array([.string("email")]))])),
                ("user_metadata", .object([])), ("role", .string("authenticated")), ("aal", .string("aal1")),
                ("amr", .array([.object([("method", .string("password")), ("timestamp", .integer(now))])])),
                ("session_id", .string("11111111-1111-4111-8111-111111111111")), ("is_anonymous", .bool(false)),
            ])))
        }
        let clock = ContinuousClock()
        func micros(_ duration: Duration) -> Double {
            Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
        }
        var uncached: [Double] = []
        for token in tokens {
            let start = clock.now
            _ = try await verifier.identity(for: token)
            uncached.append(micros(clock.now - start))
        }
        var cached: [Double] = []
        for _ in 0..<samples {
            let start = clock.now
            _ = try await verifier.identity(for: tokens[0])
            cached.append(micros(clock.now - start))
        }
        return Report(uncachedMicroseconds: uncached, cachedMicroseconds: cached)
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
