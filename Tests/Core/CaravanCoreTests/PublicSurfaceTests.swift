import Foundation
import Testing

/// The public surface of the package is a decision: every `public` or `open` declaration in `Sources/` is listed in
/// `PublicSurface.txt` beside this file, one per line (`Module  Context  declaration`), and a declaration that is
/// not listed (or a listed one that is gone) fails this test. Everything else is `package`.
///
/// To accept a change of the surface, regenerate the list and review its diff with the change:
///
///     CARAVAN_UPDATE_PUBLIC_SURFACE=1 swift test --filter PublicSurfaceTests
///     git diff Tests/Core/CaravanCoreTests/PublicSurface.txt
///
/// The scan reads the sources as text (no compiler, no symbol graph): a line whose modifiers include `public` or
/// `open`, and the members of a `public extension`, a `public protocol` and the cases of a `public enum`, which are
/// public without saying so. A declaration is listed by its first line, so a signature change shows in the diff.
@Suite("Public surface")
struct PublicSurfaceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let listFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("PublicSurface.txt")

    /// The libraries another package may depend on. A new product is a decision too.
    static let libraryProducts = ["CaravanCLI", "CaravanClient", "CaravanCore", "CaravanHost", "CaravanTesting", "Places"]

    @Test func everyPublicDeclarationIsListed() throws {
        let found = try Self.surface()
        if ProcessInfo.processInfo.environment["CARAVAN_UPDATE_PUBLIC_SURFACE"] == "1" {
            try (found.joined(separator: "\n") + "\n").write(to: Self.listFile, atomically: true, encoding: .utf8)
        }
        let listed = try String(contentsOf: Self.listFile, encoding: .utf8).split(separator: "\n").map(String.init)
        let added = Set(found).subtracting(listed).sorted()
        let removed = Set(listed).subtracting(found).sorted()
        #expect(added.isEmpty, "public, and not in PublicSurface.txt (make it `package`, or regenerate the list: see PublicSurfaceTests):\n\(added.joined(separator: "\n"))")
        #expect(removed.isEmpty, "in PublicSurface.txt, and no longer public (regenerate the list: see PublicSurfaceTests):\n\(removed.joined(separator: "\n"))")
    }

    @Test func theLibraryProductsAreTheListedOnes() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let libraries = manifest.matches(of: #/\.library\(name: "([^"]+)"/#).map { String($0.output.1) }.sorted()
        #expect(libraries == Self.libraryProducts)
    }

    @Test func theScanSeesImplicitAndExplicitPublicDeclarations() {
        let text = """
        public struct Box: Sendable {
            public let value: Int
            let hidden: Int
            public init(value: Int) { self.value = value; hidden = 0 }
            func helper() { let local = "public func no() {" ; _ = local }
        }
        public extension Box {
            var doubled: Int { value * 2 }
            private var secret: Int { 0 }
        }
        public enum Kind {
            case one, two
            case three
        }
        public protocol Boxed {
            var box: Box { get }
        }
        package struct Inner {
            public var x: Int
        }
        // public func commented()
        public final class Clock {
            public class func shared() -> Clock { Clock() }
        }
        """
        #expect(Self.declarations(in: text, module: "M") == [
            "M  -  struct Box: Sendable",
            "M  Box  let value: Int",
            "M  Box  init(value: Int)",
            "M  -  extension Box",
            "M  Box  var doubled: Int",
            "M  -  enum Kind",
            "M  Kind  case one, two",
            "M  Kind  case three",
            "M  -  protocol Boxed",
            "M  Boxed  var box: Box { get }",
            "M  Inner  var x: Int",
            "M  -  final class Clock",
            "M  Clock  class func shared() -> Clock",
        ])
    }

    // MARK: The scan

    /// Every target folder under `Sources/` named in Package.swift, scanned; sorted lines.
    static func surface() throws -> [String] {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let folders = manifest.matches(of: #/path: "(Sources/[^"]+)"/#).map { String($0.output.1) }
        #expect(folders.count > 20, "found the targets' folders in Package.swift")
        var lines: [String] = []
        for folder in folders {
            let module = URL(fileURLWithPath: folder).lastPathComponent
            let directory = root.appendingPathComponent(folder)
            let files = (FileManager.default.enumerator(atPath: directory.path)?.compactMap { $0 as? String } ?? [])
                .filter { $0.hasSuffix(".swift") }.sorted()
            for file in files {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                lines += declarations(in: text, module: module)
            }
        }
        return Array(Set(lines)).sorted()
    }

    static let accessWords: Set<String> = ["public", "open", "package", "internal", "private", "fileprivate"]
    static let modifierWords: Set<String> = [
        "static", "final", "class", "override", "mutating", "nonmutating", "nonisolated", "convenience", "required",
        "lazy", "weak", "unowned", "indirect", "dynamic", "optional", "consuming", "borrowing", "distributed",
    ]
    static let typeKeywords: Set<String> = ["struct", "enum", "class", "actor", "protocol", "extension"]
    static let declarationKeywords: Set<String> = typeKeywords.union(["func", "init", "var", "let", "case", "typealias", "subscript", "associatedtype", "macro", "deinit"])

    /// A type or extension body being read: its name, the brace depth inside it, and whether its members are public
    /// without a modifier (`public extension`, `public protocol`; for a `public enum`, its cases).
    struct Scope {
        var name: String
        var depth: Int
        var membersPublic: Bool
        var casesPublic: Bool
    }

    /// Whether `class` at `index` declares a class (`public final class Box`) rather than modifying a member
    /// (`class func`, `class var`): it is a modifier only before another modifier or a declaration keyword.
    static func isTypeKeywordClass(_ words: [String], at index: Int) -> Bool {
        guard words[index] == "class" else { return false }
        guard index + 1 < words.count else { return true }
        let next = words[index + 1]
        return !(declarationKeywords.contains(next) || modifierWords.contains(next) || accessWords.contains(next))
    }

    /// The public declarations of one file's text.
    static func declarations(in text: String, module: String) -> [String] {
        var result: [String] = []
        var scopes: [Scope] = []
        var depth = 0
        var inMultilineString = false
        var inBlockComment = false
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let code = stripped(String(rawLine), inMultilineString: &inMultilineString, inBlockComment: &inBlockComment)
            let words = code.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            // Attributes (`@inlinable`, `@available(…)`) come before the modifiers.
            var index = 0
            while index < words.count, words[index].hasPrefix("@") { index += 1 }
            var access: String?
            var modifiers: [String] = []
            while index < words.count {
                let word = words[index]
                let bare = word.split(separator: "(").first.map(String.init) ?? word
                if accessWords.contains(bare) {
                    if word == bare { access = access ?? bare } else { modifiers.append(word) }  // `private(set)`
                } else if modifierWords.contains(word), !isTypeKeywordClass(words, at: index) {
                    modifiers.append(word)
                } else {
                    break
                }
                index += 1
            }
            let scope = scopes.last
            let isMember = scope.map { $0.depth == depth } ?? (depth == 0)
            if isMember, index < words.count, let keyword = declarationKeyword(words[index]) {
                let implicit = access == nil && scope.map { $0.membersPublic || (keyword == "case" && $0.casesPublic) } ?? false
                let isPublic = access == "public" || access == "open" || implicit
                if isPublic {
                    result.append("\(module)  \(scope?.name ?? "-")  \(signature((modifiers + words[index...]).joined(separator: " ")))")
                }
                if typeKeywords.contains(keyword), code.contains("{") {
                    let name = words.count > index + 1 ? typeName(words[index + 1]) : "?"
                    let nested = scope.map { $0.name + "." + name } ?? name
                    let publicType = access == "public" || access == "open"
                    scopes.append(Scope(name: keyword == "extension" ? name : nested, depth: depth + 1,
                                        membersPublic: publicType && (keyword == "extension" || keyword == "protocol"),
                                        casesPublic: publicType && keyword == "enum"))
                }
            }
            for character in code {
                if character == "{" { depth += 1 }
                if character == "}" {
                    depth -= 1
                    if let last = scopes.last, depth < last.depth { scopes.removeLast() }
                }
            }
        }
        return result
    }

    static func declarationKeyword(_ word: String) -> String? {
        let bare = String(word.prefix { $0.isLetter })
        guard declarationKeywords.contains(bare) else { return nil }
        // `init(`, `init?(`, `init<T>(`, `subscript(` are written without a space.
        return bare == word || word.dropFirst(bare.count).first.map { "(<?!".contains($0) } == true ? bare : nil
    }

    static func typeName(_ word: String) -> String {
        String(word.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." })
    }

    /// The declaration's first line without its body or initial value.
    static func signature(_ text: String) -> String {
        var text = text
        // A body goes; an accessor list (`{ get }`, `{ get set }`) stays, it is part of a requirement.
        if let brace = text.firstIndex(of: "{"), !text[brace...].hasPrefix("{ get") {
            text = String(text[..<brace])
        }
        // An initial value goes (`static let notes = TableSchema(…`); a parameter's default stays.
        if let equals = text.range(of: " = "), !text[..<equals.lowerBound].contains("(") {
            text = String(text[..<equals.lowerBound])
        }
        return text.trimmingCharacters(in: .whitespaces)
    }

    /// The line with comments and string contents removed (braces in them are not code).
    static func stripped(_ line: String, inMultilineString: inout Bool, inBlockComment: inout Bool) -> String {
        var output = ""
        var characters = Array(line)[...]
        var inString = false
        while let character = characters.first {
            if inBlockComment {
                if characters.starts(with: ["*", "/"]) { inBlockComment = false; characters = characters.dropFirst(2) } else { characters = characters.dropFirst() }
                continue
            }
            if inMultilineString {
                if characters.starts(with: ["\"", "\"", "\""]) { inMultilineString = false; output += "\"\""; characters = characters.dropFirst(3) } else { characters = characters.dropFirst() }
                continue
            }
            if inString {
                if character == "\\" { characters = characters.dropFirst(2); continue }
                if character == "\"" { inString = false; output.append("\"") }
                characters = characters.dropFirst()
                continue
            }
            if characters.starts(with: ["/", "/"]) { break }
            if characters.starts(with: ["/", "*"]) { inBlockComment = true; characters = characters.dropFirst(2); continue }
            if characters.starts(with: ["\"", "\"", "\""]) { inMultilineString = true; output += "\"\""; characters = characters.dropFirst(3); continue }
            if character == "\"" { inString = true }
            output.append(character)
            characters = characters.dropFirst()
        }
        return output.trimmingCharacters(in: .whitespaces)
    }
}
