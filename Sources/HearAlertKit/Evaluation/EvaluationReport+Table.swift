import Foundation

extension EvaluationReport {
    /// The report as a reader wants it on a terminal: headline figures, a per-class table, the SNR breakdowns,
    /// enhancement and speed. The JSON report holds everything this leaves out (counts, per-file results).
    public func table() -> String {
        let corpusLine = String(format: "%d files, %.2f h, %d alert-free, %d reference events",
                                corpus.files, corpus.hours, corpus.alertFreeFiles, corpus.referenceEvents)
        var sections = [
            "HearAlert evaluation of \(model)\non \(corpus.directory) (\(corpusLine))",
            String(format: "collar %.0f ms, offset collar max(%.0f ms, %.0f%% of length), segments %g s, ",
                   conventions.collarSeconds * 1000, conventions.collarSeconds * 1000,
                   conventions.offsetFractionOfLength * 100, conventions.segmentSeconds)
                + "matching as sed_eval 0.2.1 (optimal)",
            headlines(),
            classTable(),
        ]
        if !byAlertSNR.isEmpty { sections.append(snrTable("By alert-to-background SNR", byAlertSNR)) }
        if !bySpeechSNR.isEmpty { sections.append(snrTable("By speech-to-noise SNR", bySpeechSNR)) }
        if let enhancement { sections.append(enhancementLines(enhancement)) }
        sections.append(String(format: "%.0f s of audio in %.1f s with %d jobs: %.0f× real time",
                               timing.audioSeconds, timing.wallSeconds, timing.jobs, timing.speedFactor))
        return sections.joined(separator: "\n\n") + "\n"
    }

    private func headlines() -> String {
        var table = TextTable(header: ["Overall", "value"])
        for metric in HeadlineMetric.all where metric.value(self) != nil {
            table.add([metric.name, metric.formatted(self)])
        }
        return table.rendered()
    }

    private func classTable() -> String {
        var table = TextTable(header: ["Class", "N_ref", "N_sys", "F1", "P", "R", "ER", "onset F1", "seg F1",
                                       "latency", "delay"])
        let events = detection.eventBased, onsets = detection.eventBasedOnsetOnly
        let segments = detection.segmentBased
        for (index, label) in corpus.labels.enumerated() {
            let scores = events.classScores(label), counts = events.classCounts[label] ?? DetectionCounts()
            table.add([label, "\(counts.reference)", "\(counts.system)", ReportFormat.percent(scores.fMeasure),
                       ReportFormat.percent(scores.precision), ReportFormat.percent(scores.recall),
                       ReportFormat.rate(scores.errorRate), ReportFormat.percent(onsets.classScores(label).fMeasure),
                       ReportFormat.percent(segments.classScores(label).fMeasure),
                       ReportFormat.seconds(detection.latency.classWise[index].latency.median),
                       ReportFormat.seconds(detection.announcementDelay.classWise[index].latency.median)])
        }
        let macro = events.macro
        table.add(["macro average", "", "", ReportFormat.percent(macro.fMeasure), ReportFormat.percent(macro.precision),
                   ReportFormat.percent(macro.recall), ReportFormat.rate(macro.errorRate),
                   ReportFormat.percent(onsets.macro.fMeasure), ReportFormat.percent(segments.macro.fMeasure), "", ""])
        let micro = events.overall, counts = events.overallCounts
        table.add(["overall (micro)", "\(counts.reference)", "\(counts.system)", ReportFormat.percent(micro.fMeasure),
                   ReportFormat.percent(micro.precision), ReportFormat.percent(micro.recall),
                   ReportFormat.rate(micro.errorRate), ReportFormat.percent(onsets.overall.fMeasure),
                   ReportFormat.percent(segments.overall.fMeasure),
                   ReportFormat.seconds(detection.latency.overall.median),
                   ReportFormat.seconds(detection.announcementDelay.overall.median)])
        return "Event-based per class (ER: class-wise, no substitutions; overall: S+D+I; latency and delay: medians)\n"
            + table.rendered() + "\n" + Self.delayLegend
    }

    private func snrTable(_ title: String, _ buckets: [SNRBucketReport]) -> String {
        var table = TextTable(header: ["SNR", "files", "N_ref", "event F1", "onset F1", "seg F1", "latency",
                                       "delay", "false alarms"])
        for bucket in buckets {
            let detection = bucket.detection
            table.add([bucket.name, "\(detection.files)", "\(detection.eventBased.overallCounts.reference)",
                       ReportFormat.percent(detection.eventBased.overall.fMeasure),
                       ReportFormat.percent(detection.eventBasedOnsetOnly.overall.fMeasure),
                       ReportFormat.percent(detection.segmentBased.overall.fMeasure),
                       ReportFormat.seconds(detection.latency.overall.median),
                       ReportFormat.seconds(detection.announcementDelay.overall.median),
                       ReportFormat.perHour(detection.falseAlarms.alertFreeTime.perHour)])
        }
        return title + "\n" + table.rendered()
    }

    private func enhancementLines(_ enhancement: EnhancementReport) -> String {
        var table = TextTable(header: ["Enhancement (\(enhancement.files) files)", "in", "out", "change"])
        table.add(["SNR", ReportFormat.decibels(enhancement.snrInDB), ReportFormat.decibels(enhancement.snrOutDB),
                   ReportFormat.difference(enhancement.snrImprovementDB, decimals: 1, unit: " dB")])
        table.add(["segmental SNR", ReportFormat.decibels(enhancement.segmentalSNRInDB),
                   ReportFormat.decibels(enhancement.segmentalSNROutDB),
                   ReportFormat.difference(enhancement.segmentalSNRImprovementDB, decimals: 1, unit: " dB")])
        table.add(["alert energy retained (\(enhancement.alertFiles) files)", "", "",
                   ReportFormat.difference(enhancement.alertRetainedDB, decimals: 1, unit: " dB")])
        return table.rendered()
    }
}

extension EvaluationReport {
    /// One line per file (with `--per-file`): what was there, what was found, and what went wrong.
    public func perFileTable() -> String {
        guard let files else { return "" }
        var table = TextTable(header: ["File", "alert SNR", "N_ref", "N_sys", "TP", "S", "D", "I", "false alarms",
                                       "latency", "delay"])
        for file in files {
            let events = file.score.events
            table.add([file.filename, ReportFormat.decibels(file.alertSNRDB), "\(events.reference)", "\(events.system)",
                       "\(events.truePositives)", "\(events.substitutions)", "\(events.deletions)",
                       "\(events.insertions)", "\(file.score.falseAlarms)", Self.secondsList(file.score.latencies),
                       Self.secondsList(file.score.announcementDelays)])
        }
        return "Per file (event-based counts; latencies and delays in seconds, one per event)\n"
            + table.rendered() + "\n" + Self.delayLegend + "\n"
    }

    private static func secondsList(_ values: [Double]) -> String {
        values.isEmpty ? "—" : values.map { String(format: "%.2f", $0) }.joined(separator: " ")
    }

    /// Says which wait each column measures: the two differ exactly for the alerts a user waits longest for.
    static let delayLegend = """
          latency: announced minus onset, over events whose onset was stamped within the collar
          delay:   the same over every event a detection of its label overlaps, however stamped: the user's wait
        """
}
