import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// Xcode's `defaultDateTimeInterval` imports as the schema's ISO 8601 date default, whose value in
/// the runtime is the same instant, and exports back as `defaultDateTimeInterval`.
@Suite(.heavy)
struct CoreDataDateDefaultTests {
    /// Seconds since 2001 as Xcode could write them: whole, to the millisecond, finer, negative,
    /// and near the ends of the years an ISO 8601 date can name.
    static func intervals(count: Int) -> [Double] {
        var random = SplitMix64(seed: 2001)
        let edges: [Double] = [
            0, 1, -1, 0.5, -0.5, 0.001, -0.001, 599_659_200, -978_307_200, 1e9 + 0.25,
            CoreDataDateDefault.range.lowerBound, CoreDataDateDefault.range.upperBound.rounded(.down),
        ]
        let drawn = (edges.count..<count).map { index -> Double in
            let whole = Double(Int64.random(in: -63_113_904_000...252_423_993_598, using: &random))
            switch index % 4 {
            case 0: return whole
            case 1: return Double(Int64.random(in: -5_000_000_000...5_000_000_000, using: &random))
            case 2: return whole + Double(Int.random(in: 1...999, using: &random)) / 1000
            default:
                return Double(Int.random(in: -3_000_000...3_000_000, using: &random))
                    + Double.random(in: 0..<1, using: &random)
            }
        }
        return edges + drawn
    }

    /// A one-entity bundle whose Date attributes `a0`, `a1`, … have the given defaults.
    static func bundle(_ defaults: [String]) throws -> URL {
        let attributes = defaults.enumerated().map { index, value in
            "<attribute name=\"a\(index)\" optional=\"YES\" attributeType=\"Date\" defaultDateTimeInterval=\"\(value)\" usesScalarValueType=\"NO\"/>"
        }
        return try CoreDataTestSupport.makeBundle(
            "Dates",
            versions: [
                "Dates": CoreDataTestSupport.contents(
                    "<entity name=\"Event\" representedClassName=\"Event\" syncable=\"YES\">\n"
                        + attributes.joined(separator: "\n") + "\n</entity>")
            ])
    }

    @Test func manyIntervalsImportAsTheSameInstantInTheRuntime() throws {
        let values = Self.intervals(count: 240)
        let bundle = try Self.bundle(values.map { "\($0)" })
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        #expect(!imported.loaded.hasErrors, "\(imported.loaded.diagnostics.prefix(3))")
        let event = try #require(imported.loaded.model?.versions.last?.schema.entity(named: "Event"))
        for (index, value) in values.enumerated() {
            let attribute = try #require(event.attributes.first { $0.name == "a\(index)" })
            guard case .date(let secondsSince1970)? = attribute.defaultValue else {
                Issue.record("a\(index) (\(value)) has no date default: \(String(describing: attribute.defaultValue))")
                continue
            }
            // Records use `Date(timeIntervalSince1970:)`; the store's DDL the seconds since 2001.
            let recordValue = Date(timeIntervalSince1970: secondsSince1970)
            let storedValue = secondsSince1970 - Date.timeIntervalBetween1970AndReferenceDate
            let milliseconds = (value * 1000).rounded() / 1000
            let rounded = imported.warnings.contains { $0.contains("'Event.a\(index)' is imported as") }
            #expect(rounded == (milliseconds != value), "a\(index) = \(value)")
            if value.rounded() == value {
                #expect(recordValue == Date(timeIntervalSinceReferenceDate: value), "a\(index) = \(value)")
                #expect(storedValue == value, "a\(index) = \(value)")
            } else {
                // The 1970 ↔ 2001 shift in Double costs at most a few ulps of 10^9 seconds.
                #expect(abs(recordValue.timeIntervalSinceReferenceDate - milliseconds) < 1e-6, "a\(index) = \(value)")
                #expect(abs(storedValue - milliseconds) < 1e-6, "a\(index) = \(value)")
            }
        }
    }

    @Test func garbageIntervalsAreLocatedWarningsAndNoDefault() throws {
        let garbage = [
            "nan", "inf", "-inf", "NaN", "", " ", "abc", "1e400", "-1e400", "1e12", "-1e12", "12abc",
            "0,5", "--1", "1e", "2024-05-01", String(repeating: "9", count: 400),
        ]
        let bundle = try Self.bundle(garbage)
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        #expect(!imported.loaded.hasErrors, "\(imported.loaded.diagnostics.prefix(3))")
        let event = try #require(imported.loaded.model?.versions.last?.schema.entity(named: "Event"))
        for (index, text) in garbage.enumerated() {
            #expect(event.attributes.first { $0.name == "a\(index)" }?.defaultValue == nil, "\(text)")
            let warning = imported.result.diagnostics.first { $0.message.contains("'Event.a\(index)'") }
            #expect(warning?.severity == .warning, "\(text)")
            #expect(warning?.location?.line == 4 + index, "\(text)")
            #expect(warning?.message.contains("is not imported") == true, "\(text)")
        }
    }

    @Test func aDateDefaultOnAnotherTypeIsAWarning() throws {
        let bundle = try CoreDataTestSupport.makeBundle(
            "Dates",
            versions: [
                "Dates": CoreDataTestSupport.contents(
                    """
                    <entity name="Event" representedClassName="Event" syncable="YES">
                    <attribute name="count" attributeType="Integer 16" defaultDateTimeInterval="5" usesScalarValueType="YES"/>
                    </entity>
                    """)
            ])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        #expect(
            imported.warnings.contains(
                "Dates.xcdatamodel/contents:4:1: the date default \"5\" of 'Event.count' is not imported: it is a Int16 attribute"
            ), "\(imported.warnings)")
    }

    @Test func dateDefaultsExportAsIntervalsAndRoundTrip() throws {
        let values = Self.intervals(count: 60).map { ($0 * 1000).rounded() / 1000 }
        let bundle = try Self.bundle(values.map { "\($0)" })
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let (first, second, export) = try CoreDataRoundTripTests.roundTrip(bundle.path)
        #expect(first == second)
        let xml = String(
            decoding: try #require(export.files.first { $0.path.hasSuffix("contents") }?.data), as: UTF8.self)
        #expect(!xml.contains("defaultValueString"))
        for value in values where value.rounded() == value {
            #expect(xml.contains("defaultDateTimeInterval=\"\(Int64(value))\""), "\(value)")
        }
        let schema = try #require(first.last?.entity(named: "Event"))
        let again = try #require(second.last?.entity(named: "Event"))
        #expect(schema.attributes.map(\.defaultValue) == again.attributes.map(\.defaultValue))
        #expect(schema.attributes.allSatisfy { $0.defaultValue != nil })
    }
}
