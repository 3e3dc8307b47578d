import Foundation

/// Splits a frozen SQL script into statements, so each runs through the extended protocol (which takes one
/// statement at a time). Semicolons inside quotes, quoted identifiers, dollar-quoted bodies and comments do not split.
enum PostgresScript {
    static func statements(_ script: String) -> [String] {
        var scanner = Scanner(characters: Array(script))
        while let c = scanner.peek() {
            switch c {
            case ";":
                scanner.flush()
                scanner.skip()
            case "'", "\"":
                scanner.quoted(by: c)
            case "-" where scanner.peek(1) == "-":
                scanner.lineComment()
            case "$":
                scanner.dollarQuoted()
            default:
                scanner.take()
            }
        }
        scanner.flush()
        return scanner.statements
    }

    /// The script's characters read once, left to right, into the statement being built.
    struct Scanner {
        let characters: [Character]
        var statements: [String] = []
        var current = ""
        var i = 0

        func peek(_ offset: Int = 0) -> Character? {
            i + offset < characters.count ? characters[i + offset] : nil
        }

        mutating func skip() { i += 1 }

        /// Moves the next character into the statement.
        mutating func take() {
            current.append(characters[i])
            i += 1
        }

        /// Ends the statement (one that is empty or only comments is dropped).
        mutating func flush() {
            let trimmed = current.trimmingCharacters(in: [" ", "\n", "\t", "\r"])
            if !trimmed.isEmpty, !trimmed.split(separator: "\n").allSatisfy({ $0.trimmingCharacters(in: [" ", "\t"]).hasPrefix("--") }) {
                statements.append(trimmed)
            }
            current = ""
        }

        /// A quoted literal or identifier; a doubled quote stays inside.
        mutating func quoted(by quote: Character) {
            take()
            while let c = peek() {
                take()
                guard c == quote else { continue }
                guard peek() == quote else { return }
                take()
            }
        }

        /// `-- …` up to the end of the line.
        mutating func lineComment() {
            while let c = peek(), c != "\n" { take() }
        }

        /// A dollar-quote tag `$tag$` … `$tag$` (a lone `$` is an ordinary character).
        mutating func dollarQuoted() {
            var j = i + 1
            while j < characters.count, characters[j].isLetter || characters[j].isNumber || characters[j] == "_" { j += 1 }
            guard j < characters.count, characters[j] == "$" else {
                take()
                return
            }
            let tag = String(characters[i...j])
            current += tag
            i = j + 1
            while i < characters.count {
                if characters[i] == "$", i + tag.count <= characters.count, String(characters[i..<(i + tag.count)]) == tag {
                    current += tag
                    i += tag.count
                    return
                }
                take()
            }
        }
    }
}
