import Foundation

/// Splits a frozen SQL script into statements, so each runs through the extended protocol (which takes one
/// statement at a time). Semicolons inside quotes, quoted identifiers, dollar-quoted bodies and comments do not split.
enum PostgresScript {
    static func statements(_ script: String) -> [String] {
        let characters = Array(script)
        var statements: [String] = []
        var current = ""
        var i = 0
        func flush() {
            let trimmed = current.trimmingCharacters(in: [" ", "\n", "\t", "\r"])
            if !trimmed.isEmpty, !trimmed.split(separator: "\n").allSatisfy({ $0.trimmingCharacters(in: [" ", "\t"]).hasPrefix("--") }) {
                statements.append(trimmed)
            }
            current = ""
        }
        while i < characters.count {
            let c = characters[i]
            switch c {
            case ";":
                flush()
                i += 1
            case "'", "\"":
                // A quoted literal or identifier; a doubled quote stays inside.
                current.append(c)
                i += 1
                while i < characters.count {
                    current.append(characters[i])
                    if characters[i] == c {
                        if i + 1 < characters.count, characters[i + 1] == c {
                            current.append(c)
                            i += 2
                            continue
                        }
                        i += 1
                        break
                    }
                    i += 1
                }
            case "-" where i + 1 < characters.count && characters[i + 1] == "-":
                while i < characters.count, characters[i] != "\n" {
                    current.append(characters[i])
                    i += 1
                }
            case "$":
                // A dollar-quote tag `$tag$` … `$tag$`.
                var j = i + 1
                while j < characters.count, characters[j].isLetter || characters[j].isNumber || characters[j] == "_" { j += 1 }
                guard j < characters.count, characters[j] == "$" else {
                    current.append(c)
                    i += 1
                    continue
                }
                let tag = String(characters[i...j])
                current += tag
                i = j + 1
                while i < characters.count {
                    if characters[i] == "$", i + tag.count <= characters.count, String(characters[i..<(i + tag.count)]) == tag {
                        current += tag
                        i += tag.count
                        break
                    }
                    current.append(characters[i])
                    i += 1
                }
            default:
                current.append(c)
                i += 1
            }
        }
        flush()
        return statements
    }
}
