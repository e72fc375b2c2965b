import Foundation
@testable import HearAlertKit

/// The JSON written by tools/fixtures/make_metric_fixtures.py: event lists and what sed_eval scored them.
struct MetricFixture: Decodable {
    let sedEvalVersion: String
    let cases: [Case]

    struct Case: Decodable {
        let name: String
        let labels: [String]
        let files: [File]
        let expected: Expected
    }

    struct File: Decodable {
        let filename: String
        let duration: Double
        /// Rows of `[label, onset, offset]`.
        let reference: [[LabelOrTime]]
        /// Rows of `[label, onset, offset, detected_at]`.
        let estimate: [[LabelOrTime]]

        var referenceEvents: [SoundEvent] {
            reference.map { SoundEvent(label: $0[0].label, onset: $0[1].time, offset: $0[2].time) }
        }

        var detections: [DetectedEvent] {
            estimate.map {
                DetectedEvent(label: $0[0].label, onset: $0[1].time, offset: $0[2].time, detectedAt: $0[3].time)
            }
        }
    }

    /// A cell of an event row: the label, or a time in seconds.
    enum LabelOrTime: Decodable {
        case label(String)
        case time(Double)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) { self = .label(text) } else {
                self = .time(try container.decode(Double.self))
            }
        }

        var label: String { if case .label(let text) = self { text } else { "" } }
        var time: Double { if case .time(let value) = self { value } else { .nan } }
    }

    struct Expected: Decodable {
        let eventBased: Scores
        let eventBasedOnsetOnly: Scores
        let segmentBased: Scores
        let latency: LatencyTable
        /// Not sed_eval's: computed plainly by the script from the event lists.
        let announcementDelay: LatencyTable
        let falseAlarms: FalseAlarms
    }

    struct Scores: Decodable {
        let overall: Overall
        let macro: ScoreValues
        let classWise: [String: ClassEntry]
    }

    struct Overall: Decodable {
        let counts: Counts
        let scores: ScoreValues

        init(from decoder: any Decoder) throws {
            counts = try Counts(from: decoder.container(keyedBy: Key.self).superDecoder(forKey: .counts))
            scores = try ScoreValues(from: decoder)
        }

        private enum Key: String, CodingKey { case counts }
    }

    struct ClassEntry: Decodable {
        let reference: Int
        let system: Int
        let scores: ScoreValues

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            reference = try container.decode(Int.self, forKey: .reference)
            system = try container.decode(Int.self, forKey: .system)
            scores = try ScoreValues(from: decoder)
        }

        private enum Key: String, CodingKey { case reference, system }
    }

    struct Counts: Decodable {
        let reference, system, truePositives, substitutions, deletions, insertions: Int
    }

    /// sed_eval's values; `nil` where sed_eval gave NaN.
    struct ScoreValues: Decodable {
        let fMeasure, precision, recall, errorRate, substitutionRate, deletionRate, insertionRate: Double?
    }

    struct LatencyTable: Decodable {
        let overall: Latency
        let classWise: [String: Latency]
    }

    struct Latency: Decodable {
        let count: Int
        let median, p90: Double?
    }

    struct FalseAlarms: Decodable {
        let alertFreeFiles, alertFreeTime: Exposure
    }

    struct Exposure: Decodable {
        let count: Int
        let seconds: Double
        let perHour: Double?
    }
}

extension MetricFixture {
    /// The fixture's keys are snake_case, as sed_eval and the Swift report write them.
    static func decode(_ data: Data) throws -> MetricFixture {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(MetricFixture.self, from: data)
    }
}
