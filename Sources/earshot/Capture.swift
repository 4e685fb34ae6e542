import ArgumentParser
import EarshotCapture
import EarshotCore
import EarshotIO
import Foundation

extension CaptureMode: ExpressibleByArgument {}

/// `earshot capture [IN] -o OUT --mode M`: record or process a microphone as a phone's capture modes do.
struct Capture: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Capture like a phone: raw, standard, voice-isolation or wide-spectrum.",
        discussion: """
            standard: 80 Hz high-pass, gentle noise suppression (10 dB), automatic gain to −20 dBFS. \
            voice-isolation: echo cancellation against what the loudspeaker played (--far on files; \
            live, the recording given with --play, played through the output device), the \
            learned noise suppressor at full strength with detected alert sounds kept out of it (as \
            in listen), automatic gain. wide-spectrum: no suppression, full bandwidth, slow and \
            gentle level control. Every mode but raw ends in a −1 dBFS peak guard. Without IN it \
            records from the input device until Ctrl-C or --seconds.
            """)

    @Argument(help: "A recording to process; without it, capture from the input device.")
    var input: String?

    @Option(name: .shortAndLong, help: "Output file.")
    var output: String

    @Option(help: "raw, standard, voice-isolation or wide-spectrum.")
    var mode: CaptureMode = .standard

    @Option(help: "The far end for echo cancellation (voice-isolation, files only): what the loudspeaker played.")
    var far: String?

    @Option(help: "Live voice-isolation: play this recording (the far end, as a call would) through the output device and take its echo out of the microphone. Capture stops half a second after it ends unless --seconds says otherwise.")
    var play: String?

    @Option(help: "Stop a live capture after this many seconds.")
    var seconds: Double?

    @OptionGroup var inputDevice: InputDeviceOption
    @OptionGroup var outputDevice: OutputDeviceOption
    @OptionGroup var ceiling: OutputCeilingOption

    func validate() throws {
        if far != nil, mode != .voiceIsolation { throw ValidationError("--far is for --mode voice-isolation") }
        if far != nil, input == nil { throw ValidationError("--far needs a recording (IN); live, give the far end with --play") }
        if play != nil, mode != .voiceIsolation { throw ValidationError("--play is for --mode voice-isolation") }
        if play != nil, input != nil { throw ValidationError("--play is for live capture: leave out IN, or give the far end with --far") }
        if let seconds, !(seconds.isFinite && seconds > 0 && seconds <= 86_400) {
            throw ValidationError("--seconds must be between 0 and 86400, not \(seconds)")
        }
        if input != nil, seconds != nil { throw ValidationError("--seconds is for live capture: leave out IN") }
    }

    func run() throws {
        try OutputPath.refuseOverwriting(output, inputs: [input, far, play])
        if let input { return try mode.process(input, farEnd: far, to: output) }
        let farEnd = try play.map { (samples: try LiveCapture.farEnd($0, under: ceiling.guardStage), speaker: try outputDevice.find()) }
        let capture = LiveCapture(mode: mode, microphone: try inputDevice.find(), farEnd: farEnd, seconds: seconds)
        installInterruptHandler()
        Terminal.note("Capturing from \(capture.microphone.name) in \(mode.rawValue) mode"
            + (farEnd.map { ", playing \(play ?? "") through \($0.speaker.name) as the far end" } ?? "")
            + (capture.limitFrames == nil ? "; Ctrl-C stops" : ""))
        try capture.run(into: output, stop: interruptRequested)
    }
}
