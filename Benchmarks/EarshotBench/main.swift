// `make bench`: speed of Earshot's building blocks as real-time factors (seconds of work per
// second of audio on one core; below 1 is faster than real time), and whole-file conversion
// against sox measured in the same run; then the hearing-test procedures on a simulated
// population. `earshot-bench core|enhance|sounds|capture|room|audiometry` runs one group.
import CAllocationCounter
import EarshotAlerts
import EarshotAudiometry
import EarshotCapture
import EarshotCore
import EarshotHearingAid
import EarshotDSP
import EarshotEnhance
import EarshotIO
import EarshotSounds
import Foundation

/// Best of `repeats` runs: the least disturbed by whatever else the machine is doing.
func best(_ repeats: Int = 5, _ body: () throws -> Void) rethrows -> Double {
    var fastest = Double.infinity
    for _ in 0..<repeats {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        fastest = min(fastest, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return fastest
}

/// Runs a fresh processor over `audioSeconds` of noise in blocks of `block` frames.
func realTimeFactor<P: AudioProcessor>(_ make: () throws -> P, rate: Double, channels: Int, block: Int, audioSeconds: Double = 10) throws -> Double {
    try measure(make, rate: rate, channels: channels, block: block, audioSeconds: audioSeconds).realTimeFactor
}

/// The counter must see an allocation it is shown, or its zeros mean nothing.
let allocationCounterWorks: Bool = {
    guard allocation_counter_supported() != 0 else { return false }
    allocation_counter_start()
    let probe = UnsafeMutablePointer<Float>.allocate(capacity: 1000)
    let seen = allocation_counter_stop()
    probe.deallocate()
    return seen >= 1
}()

/// Real-time factor, the heap allocations `process` made after `prepare` (nil where the
/// allocator cannot be watched), and the slowest block: of the three runs, the one whose slowest
/// block was fastest (the least disturbed by the rest of the machine).
/// With `bursts`, the noise sounds 100 ms in every second and the rest is digital silence, as
/// from a sound server with nothing playing: states that decay towards zero there must not slow.
func measure<P: AudioProcessor>(_ make: () throws -> P, rate: Double, channels: Int, block: Int, audioSeconds: Double = 10, bursts: Bool = false,
                                 input given: [[Float]]? = nil) throws
    -> (realTimeFactor: Double, allocations: Int?, worstBlockSeconds: Double)
{
    let frames = given?[0].count ?? Int(rate * audioSeconds)
    let audioSeconds = Double(frames) / rate
    var random = SeededRandom(seed: 1)
    let input = given.map { AudioBuffer(channels: $0) } ?? AudioBuffer(channels: (0..<channels).map { _ in
        (0..<frames).map { n in
            let noise = Float.random(in: -0.5...0.5, using: &random)
            return !bursts || n % Int(rate) < Int(rate) / 10 ? noise : 0
        }
    })
    var allocations: Int?
    var worst = Double.infinity
    let seconds = try best(3) {
        let processor = try make()
        try processor.prepare(ProcessSpec(sampleRate: rate, maximumBlockFrames: block, channelCount: channels))
        allocation_counter_start()
        var position = 0
        var slowest: UInt64 = 0
        while position < frames {
            let count = min(block, frames - position)
            var view = input.block().frames(from: position, count: count)
            let start = DispatchTime.now().uptimeNanoseconds
            processor.process(&view)
            slowest = max(slowest, DispatchTime.now().uptimeNanoseconds - start)
            position += count
        }
        let counted = allocation_counter_stop()
        allocations = allocationCounterWorks ? Int(counted) : nil
        worst = min(worst, Double(slowest) / 1e9)
    }
    return (seconds / audioSeconds, allocations, worst)
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

struct Table {
    var rows: [(task: String, value: String, note: String)] = []

    mutating func add(_ task: String, realTimeFactor: Double, _ note: String = "") {
        rows.append((task, String(format: "%.5f", realTimeFactor), note))
    }

    func print() {
        let width = rows.map(\.task.count).max() ?? 4
        Swift.print("task".padding(toLength: width, withPad: " ", startingAt: 0) + "  RTF / time    note")
        for row in rows {
            Swift.print(row.task.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                        + row.value.padding(toLength: 12, withPad: " ", startingAt: 0) + "  " + row.note)
        }
    }
}

func coreRows(_ table: inout Table) throws {
    for size in [256, 512, 4096] {
        let fft = RealFFT(size: size)
        for i in 0..<size { fft.time[i] = Float(i % 7) }
        let calls = 20_000
        let t = best { for _ in 0..<calls { fft.forward(); fft.inverse() } }
        table.rows.append(("FFT \(size) forward+inverse", String(format: "%.3f µs", t / Double(calls) * 1e6), "per pair"))
    }
    table.add("STFT→ISTFT 16 kHz mono, 256/64, blocks of 64", realTimeFactor: try realTimeFactor(
        { SpectralProcessor(configuration: STFTConfiguration(frameSize: 256, hop: 64), stage: IdentitySpectralStage()) },
        rate: 16_000, channels: 1, block: 64))
    table.add("STFT→ISTFT 48 kHz stereo, 1024/256, blocks of 480", realTimeFactor: try realTimeFactor(
        { SpectralProcessor(configuration: STFTConfiguration(frameSize: 1024, hop: 256), stage: IdentitySpectralStage()) },
        rate: 48_000, channels: 2, block: 480))
    table.add("Biquad ×3 (A-weighting) 48 kHz stereo", realTimeFactor: try realTimeFactor(
        { AWeighting.filter(sampleRate: 48_000) }, rate: 48_000, channels: 2, block: 480))
    table.add("Output level guard 48 kHz stereo", realTimeFactor: try realTimeFactor(
        { OutputLevelGuard(ceilingDBFS: -6) }, rate: 48_000, channels: 2, block: 480))

    // Whole-file conversion: earshot against sox on the same 60 s stereo file.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-bench-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let input = directory.appendingPathComponent("in.wav").path
    let audioSeconds = 60.0
    var random = SeededRandom(seed: 2)
    let frames = Int(48_000 * audioSeconds)
    let channels = (0..<2).map { _ in (0..<frames).map { _ in Float.random(in: -0.3...0.3, using: &random) } }
    try AudioFile.write(AudioBuffer(channels: channels), to: input, sampleRate: 48_000)
    let earshot = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("earshot").path
    let mine = try timeProcess(earshot, ["convert", input, "-o", directory.appendingPathComponent("a.wav").path, "--rate", "16000"])
    table.add("earshot convert 48→16 kHz stereo (soxr VHQ)", realTimeFactor: mine / audioSeconds)
    if let sox = ["/usr/bin/sox", "/usr/local/bin/sox", "/opt/homebrew/bin/sox"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
        let theirs = try timeProcess(sox, [input, directory.appendingPathComponent("b.wav").path, "rate", "-v", "16000"])
        table.add("sox rate -v 48→16 kHz stereo (peer)", realTimeFactor: theirs / audioSeconds, String(format: "earshot/sox = %.2f", mine / theirs))
    }
}

/// "allocations after prepare: N" or why it cannot be said.
func allocationNote(_ count: Int?) -> String { "allocations after prepare: " + (count.map(String.init) ?? "not measurable here") }

func enhanceRows(_ table: inout Table) throws {
    for model in NoiseSuppressor.Model.allCases {
        for (rate, block) in [(16_000.0, 64), (16_000.0, 160), (48_000.0, 64), (48_000.0, 480)] {
            let result = try measure({ try NoiseSuppressor(model: model) }, rate: rate, channels: 1, block: block)
            // The live path's deadline: a block must be done before the next one arrives.
            let deadline = Double(block) / rate
            table.add("Noise suppressor (\(model)), \(Int(rate / 1000)) kHz mono, \(block)-sample blocks", realTimeFactor: result.realTimeFactor,
                      String(format: "worst block %.0f µs = %.1f %% of its %.2f ms; ", result.worstBlockSeconds * 1e6,
                             100 * result.worstBlockSeconds / deadline, deadline * 1000) + allocationNote(result.allocations))
        }
    }
    let network = try AlertNetwork.bundled()
    for (rate, block) in [(16_000.0, 160), (48_000.0, 480)] {
        let result = try measure({ AlertDetector(network: network) }, rate: rate, channels: 1, block: block)
        table.add("Alert detector (features + CNN every 100 ms), \(Int(rate / 1000)) kHz, \(block)-sample blocks", realTimeFactor: result.realTimeFactor,
                  allocationNote(result.allocations))
        for chainBlock in [64, block] {
            let chain = try measure({ try ListeningChain(detector: network, maximumOutputDBFS: -6) }, rate: rate, channels: 1, block: chainBlock)
            let deadline = Double(chainBlock) / rate
            table.add("Listening chain (detector → suppressor → guard), \(Int(rate / 1000)) kHz, \(chainBlock)-sample blocks",
                      realTimeFactor: chain.realTimeFactor,
                      String(format: "worst block %.0f µs = %.1f %% of its %.2f ms; ", chain.worstBlockSeconds * 1e6,
                             100 * chain.worstBlockSeconds / deadline, deadline * 1000) + allocationNote(chain.allocations))
        }
        // The hearing aid for a sloping severe loss (Bisgaard S3) in both ears: one microphone,
        // two ears, the compressor inside the suppressor's STFT.
        let s3: [Double: Double] = [250: 30, 500: 35, 750: 47.5, 1000: 60, 1500: 70, 2000: 75, 3000: 80, 4000: 80, 6000: 85]
        let compression = try Prescription.fit(try PureToneAudiogram(left: s3, right: s3)).compression()
        for chainBlock in [64, block] {
            let chain = try measure({ try ListeningChain(detector: network, amplification: compression, maximumOutputDBFS: -6) },
                                    rate: rate, channels: 2, block: chainBlock)
            let deadline = Double(chainBlock) / rate
            table.add("Listening chain with amplification (detector → suppressor → WDRC → guard), two ears, \(Int(rate / 1000)) kHz, \(chainBlock)-sample blocks",
                      realTimeFactor: chain.realTimeFactor,
                      String(format: "worst block %.0f µs = %.1f %% of its %.2f ms; ", chain.worstBlockSeconds * 1e6,
                             100 * chain.worstBlockSeconds / deadline, deadline * 1000) + allocationNote(chain.allocations))
        }
        let amplifier = try measure({ try WideDynamicRangeCompressor(compression) }, rate: rate, channels: 2, block: block)
        table.add("WDRC alone (10 bands), two ears, \(Int(rate / 1000)) kHz", realTimeFactor: amplifier.realTimeFactor, allocationNote(amplifier.allocations))
        let separating = try measure({ () -> NoiseSuppressor in
            let suppressor = try NoiseSuppressor(separatesAlerts: true)
            suppressor.alertSounding = true
            return suppressor
        }, rate: rate, channels: 1, block: block)
        table.add("Noise suppressor separating an alert (alert held sounding), \(Int(rate / 1000)) kHz", realTimeFactor: separating.realTimeFactor,
                  allocationNote(separating.allocations))
        let quiet = try measure({ () -> NoiseSuppressor in
            let suppressor = try NoiseSuppressor(separatesAlerts: true)
            suppressor.alertSounding = true
            return suppressor
        }, rate: rate, channels: 1, block: block, bursts: true)
        table.add("The same, on 100 ms bursts in digital silence, \(Int(rate / 1000)) kHz", realTimeFactor: quiet.realTimeFactor,
                  String(format: "worst block %.0f µs; ", quiet.worstBlockSeconds * 1e6) + allocationNote(quiet.allocations))
        // `listen`'s callback (3 ms) on 1 kHz beeps, once a second in digital silence: the
        // detector hears a smoke alarm in them, so the separator runs.
        let beeps = (0..<Int(rate * 10)).map { n in n % Int(rate) < Int(rate) / 10 ? Float(0.1 * sin(2 * Double.pi * 1000 * Double(n) / rate)) : 0 }
        let beeping = try measure({ try ListeningChain(detector: network, maximumOutputDBFS: -6) },
                                  rate: rate, channels: 1, block: Int(rate * 0.003), input: [beeps])
        table.add("Listening chain on beeps it takes for a smoke alarm, \(Int(rate / 1000)) kHz, 3 ms blocks", realTimeFactor: beeping.realTimeFactor,
                  String(format: "worst block %.0f µs = %.1f %% of its 3 ms; ", beeping.worstBlockSeconds * 1e6, beeping.worstBlockSeconds / 0.003 * 100)
                    + allocationNote(beeping.allocations))
    }
}

/// `watch`'s matcher of the user's own sounds: three enrolled sounds, fed 100 ms at a time at
/// 16 kHz as `watch` feeds them, with its slowest block against the 100 ms it has.
func soundRows(_ table: inout Table) throws {
    let embedding = try SoundEmbedding.bundled()
    let sounds = try (0..<3).map { k in
        let tone = (0..<24_000).map { n in Float(0.3 * sin(2 * Double.pi * Double(500 + 300 * k) * Double(n) / 16_000)) }
        return try SoundDetector.Sound(name: "sound\(k)", enrollments: [tone], negatives: [], embedding: embedding)
    }
    var random = SeededRandom(seed: 4)
    let audio = (0..<(16_000 * 30)).map { _ in Float.random(in: -0.1...0.1, using: &random) }
    var slowest = UInt64.max, allocations: Int?
    let seconds = best(3) {
        let detector = SoundDetector(sounds: sounds, embedding: embedding)
        var worst: UInt64 = 0
        allocation_counter_start()
        for start in stride(from: 0, to: audio.count, by: 1600) {
            let began = DispatchTime.now().uptimeNanoseconds
            _ = detector.push(audio[start..<min(audio.count, start + 1600)])
            worst = max(worst, DispatchTime.now().uptimeNanoseconds - began)
        }
        let counted = allocation_counter_stop()
        allocations = allocationCounterWorks ? Int(counted) : nil
        slowest = min(slowest, worst)
    }
    table.add("Own-sound matcher (embedding every 100 ms and tonal templates every 16 ms, against 3 sounds), 16 kHz, 1600-sample blocks", realTimeFactor: seconds / 30,
              String(format: "worst block %.0f µs = %.1f %% of its 100 ms; ", Double(slowest) / 1e3, Double(slowest) / 1e6 / 100 * 100)
                  + allocationNote(allocations))
}

/// The capture path's own processors: the echo canceller (microphone and far end in, 5 ms
/// frames; with its learned mask, as it runs, and without) and the automatic gain control, with their slowest block against its deadline.
/// The canceller is measured with 0.5 s of echo path, as for files, and with the 1 s it models
/// live (`capture --play`), narrowing to 0.3 s once it finds the path (here the far end and the
/// microphone are unrelated noise, so it keeps looking: each look, every 100 ms, is in the worst block).
func captureRows(_ table: inout Table) throws {
    let learned = EchoCanceller.defaultMaskExponent
    let configurations = [(0.5, 16_000.0, 64, learned), (0.5, 16_000.0, 160, learned), (0.5, 48_000.0, 64, learned), (0.5, 48_000.0, 480, learned), (1.0, 16_000.0, 64, learned),
                          (1.0, 48_000.0, 64, learned), (0.5, 16_000.0, 64, 0), (0.5, 48_000.0, 64, 0)]
    for (tail, rate, block, mask) in configurations {
        let deadline = Double(block) / rate
        let echo = try measure({ EchoCanceller(tailSeconds: tail, pathSeconds: tail > 0.5 ? 0.3 : nil, maskExponent: mask) }, rate: rate, channels: 2, block: block)
        table.add("Echo canceller (Kalman filter + residual echo suppressor\(mask > 0 ? " + learned mask" : " alone")), \(tail) s path\(tail > 0.5 ? " narrowing to 0.3 s" : ""), \(Int(rate / 1000)) kHz, \(block)-sample blocks", realTimeFactor: echo.realTimeFactor,
                  String(format: "worst block %.0f µs = %.1f %% of its %.2f ms; ", echo.worstBlockSeconds * 1e6,
                         100 * echo.worstBlockSeconds / deadline, deadline * 1000) + allocationNote(echo.allocations))
    }
    for rate in [16_000.0, 48_000.0] {
        let agc = try measure({ AutomaticGainControl() }, rate: rate, channels: 1, block: 64)
        table.add("Automatic gain control, \(Int(rate / 1000)) kHz, 64-sample blocks", realTimeFactor: agc.realTimeFactor, allocationNote(agc.allocations))
    }
}

func roomRows(_ table: inout Table) throws {
    // Uniformly partitioned convolution: a 2 s response at 48 kHz in 64-sample partitions.
    var random = SeededRandom(seed: 3)
    let response = (0..<96_000).map { i in Float.random(in: -1...1, using: &random) * exp(-Float(i) / 14_000) }
    for channels in [1, 2] {
        let result = try measure(
            { try PartitionedConvolver(response: [response], partitionSize: 64) }, rate: 48_000, channels: channels, block: 64, audioSeconds: 5)
        table.add("Partitioned convolution, 2 s response @ 48 kHz, 64-sample blocks, \(channels) ch", realTimeFactor: result.realTimeFactor,
                  String(format: "%.1f %% of a core; ", result.realTimeFactor * 100) + allocationNote(result.allocations))
    }
}

let group = CommandLine.arguments.dropFirst().first
var table = Table()
if group == nil || group == "core" { try coreRows(&table) }
if group == nil || group == "enhance" { try enhanceRows(&table) }
if group == nil || group == "sounds" { try soundRows(&table) }
if group == nil || group == "capture" { try captureRows(&table) }
if group == nil || group == "room" { try roomRows(&table) }
if !table.rows.isEmpty {
    print("Earshot benchmarks — real-time factor = seconds of work per second of audio (one core)\n")
    table.print()
}
if group == nil || group == "audiometry" { try audiometryReport() }
if group == nil || group == "hub" { try await hubLoadReport() }
if group == "separation" {
    guard CommandLine.arguments.count > 2 else { throw EarshotError.invalidArgument("usage: earshot-bench separation SCENE_FOLDER") }
    try separationReport(folder: CommandLine.arguments[2])
}
