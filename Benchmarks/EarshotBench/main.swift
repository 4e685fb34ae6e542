// `make bench`: speed of Earshot's building blocks, as real-time factors (seconds of work per
// second of audio; below 1 is faster than real time) on one core, plus whole-file conversion
// against sox measured in the same run.
import EarshotCore
import EarshotDSP
import EarshotIO
import Foundation

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// Best of `repeats` runs: the least disturbed by whatever else the machine is doing.
func best(_ repeats: Int = 5, _ body: () throws -> Void) rethrows -> Double {
    var fastest = Double.infinity
    for _ in 0..<repeats { fastest = min(fastest, try seconds(body)) }
    return fastest
}

var rows: [(String, String, String)] = []
@MainActor func row(_ name: String, _ perSecond: Double, _ note: String = "") {
    rows.append((name, String(format: "%.5f", perSecond), note))
}

// FFT
for size in [256, 512, 4096] {
    let fft = RealFFT(size: size)
    for i in 0..<size { fft.time[i] = Float(i % 7) }
    let calls = 20_000
    let t = best { for _ in 0..<calls { fft.forward(); fft.inverse() } }
    rows.append(("FFT \(size) forward+inverse", String(format: "%.3f µs", t / Double(calls) * 1e6), "per pair"))
}

func realTimeFactor<P: AudioProcessor>(_ make: () -> P, rate: Double, channels: Int, block: Int, audioSeconds: Double = 10) throws -> Double {
    let frames = Int(rate * audioSeconds)
    var random = SeededRandom(seed: 1)
    let input = AudioBuffer(channels: (0..<channels).map { _ in (0..<frames).map { _ in Float.random(in: -0.5...0.5, using: &random) } })
    return try best(3) {
        var processor = make()
        try processor.prepare(ProcessSpec(sampleRate: rate, maximumBlockFrames: block, channelCount: channels))
        var position = 0
        while position < frames {
            let count = min(block, frames - position)
            var view = input.block().frames(from: position, count: count)
            processor.process(&view)
            position += count
        }
    } / audioSeconds
}

try row("STFT→ISTFT 16 kHz mono, 256/64, blocks of 64",
        realTimeFactor({ SpectralProcessor(configuration: STFTConfiguration(frameSize: 256, hop: 64), stage: IdentitySpectralStage()) },
                       rate: 16_000, channels: 1, block: 64))
try row("STFT→ISTFT 48 kHz stereo, 1024/256, blocks of 480",
        realTimeFactor({ SpectralProcessor(configuration: STFTConfiguration(frameSize: 1024, hop: 256), stage: IdentitySpectralStage()) },
                       rate: 48_000, channels: 2, block: 480))
try row("Biquad ×3 (A-weighting) 48 kHz stereo", realTimeFactor({ AWeighting.filter(sampleRate: 48_000) }, rate: 48_000, channels: 2, block: 480))
try row("Output level guard 48 kHz stereo", realTimeFactor({ OutputLevelGuard(ceilingDBFS: -6) }, rate: 48_000, channels: 2, block: 480))

// Whole-file conversion: earshot against sox on the same 60 s stereo file.
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-bench-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let input = directory.appendingPathComponent("in.wav").path
let audioSeconds = 60.0
do {
    var random = SeededRandom(seed: 2)
    let frames = Int(48_000 * audioSeconds)
    let channels = (0..<2).map { _ in (0..<frames).map { _ in Float.random(in: -0.3...0.3, using: &random) } }
    try AudioFile.write(AudioBuffer(channels: channels), to: input, sampleRate: 48_000)
}
func timeProcess(_ executable: String, _ arguments: [String]) throws -> Double {
    try best(3) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
    }
}
let earshotBinary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("earshot").path
let mine = try timeProcess(earshotBinary, ["convert", input, directory.appendingPathComponent("a.wav").path, "--rate", "16000"])
row("earshot convert 48→16 kHz stereo (soxr VHQ)", mine / audioSeconds)
if let sox = ["/usr/bin/sox", "/usr/local/bin/sox", "/opt/homebrew/bin/sox"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
    let theirs = try timeProcess(sox, [input, directory.appendingPathComponent("b.wav").path, "rate", "-v", "16000"])
    row("sox rate -v 48→16 kHz stereo (peer)", theirs / audioSeconds, String(format: "earshot/sox = %.2f", mine / theirs))
}

let width = rows.map(\.0.count).max()!
print("Earshot benchmarks — real-time factor = seconds of work per second of audio (one core)\n")
print("task".padding(toLength: width, withPad: " ", startingAt: 0) + "  " + "RTF / time".padding(toLength: 12, withPad: " ", startingAt: 0) + "  note")
for (name, value, note) in rows {
    print(name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value.padding(toLength: 12, withPad: " ", startingAt: 0) + "  " + note)
}
