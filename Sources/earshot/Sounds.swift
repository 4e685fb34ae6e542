import ArgumentParser
import EarshotCore
import EarshotHub
import EarshotSounds
import Foundation

/// `earshot sounds`: the user's own sounds (the doorbell, the washing machine's end beep).
struct SoundsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sounds", abstract: "Enroll your own sounds (a doorbell, an appliance's beep) and list or remove them.",
        subcommands: [Enroll.self, List.self, Remove.self])

    /// `--store DIR`: the data folder whose hub.sqlite keeps the sounds.
    struct StoreOption: ParsableArguments {
        @Option(help: "Data folder holding hub.sqlite (default: $EARSHOT_HOME or ~/.local/share/earshot).")
        var store: String?

        func open() throws -> SoundStore {
            try SoundStore(path: ((store ?? DataDirectory.path) as NSString).appendingPathComponent("hub.sqlite"))
        }
    }

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

        @OptionGroup var store: StoreOption

        func validate() throws {
            do { try SoundStore.validate(name: name) } catch { throw ValidationError("\(error)") }
            guard (1...3).contains(files.count) else { throw ValidationError("give one to three recordings of the sound, not \(files.count)") }
        }

        func run() throws {
            let clips = try files.map { try EnrollmentClip(path: $0) }
            var stored = zip(files, clips).map { file, clip in
                SoundStore.Clip(role: .enrollment, source: (file as NSString).lastPathComponent, samples: clip.samples)
            }
            if let roomTone {
                let tone = try RoomTone(path: roomTone)
                stored.append(SoundStore.Clip(role: .roomTone, source: (roomTone as NSString).lastPathComponent, samples: tone.samples))
            }
            try store.open().enroll(name, clips: stored)
            let details = clips.map { String(format: "%.2f s, %.0f dB above its background", $0.soundSeconds, $0.contrastDB) }
            print("enrolled '\(name)' from \(clips.count) recording(s): \(details.joined(separator: "; "))\(roomTone == nil ? "" : ", with room tone")")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the enrolled sounds.")

        enum Format: String, ExpressibleByArgument { case text, json }

        @Option(help: "text or json.")
        var format: Format = .text

        @OptionGroup var store: StoreOption

        func run() throws {
            let sounds = try store.open().summaries()
            switch format {
            case .json:
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

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an enrolled sound and its recordings.")

        @Argument(help: "The sound's name.")
        var name: String

        @OptionGroup var store: StoreOption

        func run() throws {
            guard try store.open().remove(name) else {
                throw EarshotError.invalidArgument("no sound named '\(name)' is enrolled (earshot sounds list)")
            }
            print("removed '\(name)'")
        }
    }
}
