import ArgumentParser
import Foundation
import Support
import Configuration
import Capture
import Outbox
import CoreCommands

/// A place id that names no place: a usage error, as an unknown note id is.
private func noPlace(_ id: Int64) -> ValidationError {
    ValidationError("no place \(id): `enlog places` lists them")
}

struct PlacesName: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "name",
        abstract: "Name a place; your name is kept for every later visit.",
        discussion: """
            Examples:
              enlog places name 3 Home
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The place's id (from `enlog places`).") var id: Int64
    @Argument(help: "Its name.") var name: String
    @Flag(help: "Print the place as JSON.") var json = false

    func run() async throws {
        let name = try PlacesAdd.checked(name)
        let outbox = try global.context().outbox(.change)
        guard let place = try await outbox.namePlace(id: id, name: name, source: .user) else { throw noPlace(id) }
        try PlaceSummary.print([PlaceSummary(place)], json: json)
    }
}

struct PlacesAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a named place at a position.",
        discussion: """
            Examples:
              enlog places add Office --at 48.137,11.575
              enlog places add Campus --at 48.15,11.58 --radius 400
            """)

    /// Wide enough for a building and its entrance, as a new place found from stays is.
    static let defaultRadius = 100.0
    static let radiusRange = NumericRange(10, 10_000, unit: "metres")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Its name.") var name: String
    @OptionGroup var position: PositionOption
    @Option(help: ArgumentHelp("The place's radius in metres (10 to 10000; default: 100).", valueName: "metres")) var radius: Double?
    @Flag(help: "Print the place as JSON.") var json = false

    /// A name is one line of text: newlines and control characters would break the listing and a note's title.
    static func checked(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= 255, !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ValidationError("a place name is one line of 1 to 255 characters")
        }
        return trimmed
    }

    func run() async throws {
        let name = try Self.checked(name)
        guard let at = position.at else { throw ValidationError("--at LAT,LON is required: where the place is") }
        let location = try ManualLocation(at)
        let radius = radius ?? Self.defaultRadius
        guard Self.radiusRange.contains(radius) else { throw ValidationError("--radius must be \(Self.radiusRange.accepted)") }
        let outbox = try global.context().outbox()
        let place = try await outbox.addPlace(PlaceRecord(latitude: location.latitude, longitude: location.longitude,
                                                          radius: radius, name: name, nameSource: .user))
        try PlaceSummary.print([PlaceSummary(place)], json: json)
    }
}

struct PlacesMerge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Make two places one: B becomes part of A.",
        discussion: """
            Examples:
              enlog places merge 3 7
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The place kept.") var a: Int64
    @Argument(help: "The place folded into it.") var b: Int64
    @Flag(help: "Print the place as JSON.") var json = false

    func run() async throws {
        guard a != b else { throw ValidationError("a place cannot be merged with itself") }
        let outbox = try global.context().outbox(.change)
        guard let place = try await outbox.mergePlaces(kept: a, absorbed: b) else {
            throw noPlace(try await outbox.places().contains { $0.id == a } ? b : a)
        }
        try PlaceSummary.print([PlaceSummary(place)], json: json)
    }
}

struct PlacesForget: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Forget a place and its name (its stays make a new, unnamed place).",
        discussion: """
            Examples:
              enlog places forget 7
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The place's id.") var id: Int64
    @Flag(help: "Print what was forgotten as JSON.") var json = false

    func run() async throws {
        let outbox = try global.context().outbox(.change)
        guard try await outbox.forgetPlace(id: id) else { throw noPlace(id) }
        if json {
            try Terminal.standardOutput(try JSONOutput.encode(["forgotten": id]))
        } else {
            try Terminal.standardOutput("forgot place \(id)")
        }
    }
}
