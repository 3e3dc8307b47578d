import CaravanCore
import Foundation

/// The package `caravan new` writes: `Examples/Notes` (compiled in through the `Scaffold` link), with "Notes" and
/// "notes" replaced by the new app's names, and its dependency on Caravan as asked. The example is what the main
/// package builds, tests (`NotesTests`) and serves (`OwnAppTests`); its frozen migrations are renamed with it.
struct Scaffold {
    enum CaravanDependency { case path(String), repository(String, from: String) }

    /// Where Caravan's releases are published (`--caravan-path` names a local checkout instead).
    static let repository = "https://github.com/caravan-swift/caravan.git"

    let typeName: String
    let appName: String
    let caravan: CaravanDependency

    var binaryName: String { "caravan-\(appName)" }

    init(name: String, caravan: CaravanDependency) throws(CaravanError) {
        guard let first = name.first, first.isASCII, first.isLetter, name.count <= 40,
              name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw CaravanError(.invalidConfiguration, "the name \(name) is not allowed: use 1 to 40 letters and digits (A–Z, a–z, 0–9), starting with a letter")
        }
        typeName = name.prefix(1).uppercased() + name.dropFirst()
        appName = name.lowercased()
        self.caravan = caravan
    }

    /// Every file of the package by its path inside it, the frozen migrations included.
    func files() -> [String: String] {
        let (dependency, package) = switch caravan {
        case .path(let path): (".package(name: \"Caravan\", path: \"\(path)\")", "Caravan")
        case .repository(let url, let version): (".package(url: \"\(url)\", from: \"\(version)\")", "caravan")
        }
        let named = { (text: String) in text.replacingOccurrences(of: "Notes", with: typeName).replacingOccurrences(of: "notes", with: appName) }
        var files: [String: String] = [:]
        for (path, bytes) in EmbeddedFiles.contents where path.hasPrefix(Self.folder) {
            var text = named(String(decoding: bytes, as: UTF8.self))
            if path == Self.folder + "Package.swift" {
                text = text.replacingOccurrences(of: Self.exampleDependency, with: dependency)
                    .replacingOccurrences(of: #"package: "Caravan")"#, with: #"package: "\#(package)")"#)
            }
            files[named(String(path.dropFirst(Self.folder.count)))] = text
        }
        return files
    }

    static let folder = "Scaffold/"
    /// How `Examples/Notes/Package.swift` names Caravan (the checkout it sits in).
    static let exampleDependency = #".package(name: "Caravan", path: "../..")"#
}
