import ArgumentParser
import EarshotCore
import EarshotHub
import EarshotHubClient
import EarshotListening
import EarshotIO
import EarshotSounds
import Foundation

/// `earshot sounds`: the user's own sounds (the doorbell, the washing machine's end beep).
struct SoundsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sounds", abstract: "Enroll your own sounds (a doorbell, an appliance's beep) and list or remove them.",
        subcommands: [Enroll.self, List.self, Remove.self, Detect.self, Reject.self])

    struct Enroll: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enroll a sound from one to three recordings of it.",
            discussion: """
                Each recording (any format, rate and channels) should hold the whole sound with a \
                moment of quiet around it. A recording that is too short, silent, clipped or holds \
                no sound standing out from its background is refused with the reason. --room-tone \
                adds a recording of the place without the sound, as evidence of what is not it.
                """)

        @Argument(help: "A name for the sound, like front_door.")
        var name: String

        @Argument(help: "One to three recordings of the sound.")
        var files: [String]

        @Option(help: "A recording of the room without the sound.")
        var roomTone: String?

        @OptionGroup var data: DataFolderOption

        func validate() throws {
            do { try SoundStore.validate(name: name) } catch let error as EarshotFailure { throw ValidationError(Terminal.sentence(for: error)) }
            guard (1...3).contains(files.count) else { throw ValidationError("give one to three recordings of the sound, not \(files.count)") }
        }

        func run() throws {
            let clips = try data.openSounds().enroll(name, recordings: files, roomTone: roomTone)
            let details = clips.map { String(format: "%.2f s, %.0f dB above its background", $0.soundSeconds, $0.contrastDB) }
            print("enrolled '\(name)' from \(clips.count) recording(s): \(details.joined(separator: "; "))\(roomTone == nil ? "" : ", with room tone")")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the enrolled sounds.")

        @Option(help: OutputStyle.help)
        var format: OutputStyle = .text

        @OptionGroup var data: DataFolderOption

        func run() throws {
            let sounds = try data.openSounds().summaries()
            switch format {
            case .json, .jsonl:
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(sounds), as: UTF8.self))
            case .text:
                if sounds.isEmpty { print("no sounds enrolled (earshot sounds enroll NAME FILE)") }
                for sound in sounds {
                    let extras = [sound.roomTone ? "room tone" : nil, sound.rejected > 0 ? "\(sound.rejected) rejected" : nil].compactMap { $0 }
                    print("\(sound.name)  \(sound.recordings) recording(s)\(extras.isEmpty ? "" : ", " + extras.joined(separator: ", "))  enrolled \(sound.enrolled)")
                }
            }
        }
    }

    struct Detect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Find the enrolled sounds in a recording.",
            discussion: """
                One line per detection; start is when it was announced. jsonl: \
                {"sound":"front_door","start":12.34,"end":13.1,"score":0.81}.
                """)

        @Argument(help: "A recording (any format, rate and channels).")
        var file: String

        @Option(help: OutputStyle.help)
        var format: OutputStyle = .text

        @Option(help: "Announce at this score (0–1) instead of each sound's calibrated threshold.")
        var threshold: Double?

        @Option(help: "embedding (the learned sound matcher, the default), landmarks (time-consistent tonal landmarks) or peaks (the original two-strongest-peaks method); the last two to compare.")
        var method: SoundSearch.Method = .embedding

        @Option(help: .hidden)
        var trace: String?

        @OptionGroup var data: DataFolderOption

        func validate() throws {
            if let threshold, !(0...1).contains(threshold) { throw ValidationError("--threshold must be 0–1, not \(threshold)") }
        }

        func run() throws {
            let store = try data.openSounds()
            guard !(try store.summaries().isEmpty) else { throw HubError.noSoundsEnrolled }
            let samples = try MatchingAudio(path: file).samples
            if let trace, method == .embedding {
                let (csv, notes) = try SoundSearch.scoreTable(of: samples, store: store, threshold: threshold)
                try AtomicFile.write(Data(csv.utf8), to: trace)
                notes.forEach(Terminal.note)
            }
            report(try SoundSearch.find(in: samples, store: store, method: method, threshold: threshold))
        }

        private func report(_ found: [SoundDetection]) {
            for detection in found {
                switch format {
                case .json, .jsonl:
                    print(EventRecord(kind: .sound, label: detection.sound, start: detection.start, end: detection.end,
                                      confidence: detection.score, formerNames: .sound).jsonLine)
                case .text:
                    print(String(format: "%8.2f s  %@ (score %.2f)", detection.start, detection.sound, detection.score))
                }
            }
        }
    }

    struct Reject: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Not my doorbell: keep a false alarm as evidence of what the sound is not.",
            discussion: "The sound's threshold is raised above what the recording scores, so the same false alarm does not come back.")

        @Argument(help: "The sound that was wrongly announced.")
        var name: String

        @Argument(help: "A recording of what set it off (up to 30 s).")
        var file: String

        @OptionGroup var data: DataFolderOption

        func run() throws {
            let (before, after) = try data.openSounds().reject(file, for: name)
            print(String(format: "'%@' will not be announced for this again (threshold %.2f, was %.2f)", name, after, before))
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an enrolled sound and its recordings.")

        @Argument(help: "The sound's name.")
        var name: String

        @OptionGroup var data: DataFolderOption

        func run() throws {
            guard try data.openSounds().remove(name) else { throw HubError.noSuchSound(name) }
            print("removed '\(name)'")
        }
    }
}

extension SoundSearch.Method: ExpressibleByArgument {}
