import Atomics
import EarshotAlerts
import EarshotCore
import EarshotDSP
import EarshotHearingAid
import EarshotHubClient
import EarshotIO
import Foundation

/// The hearing-aid path run from end to end, `listen`'s two ways: device to device with the
/// chain inside the device callback, or with a file at one end at least, block by block.
public final class ListeningRun {
    public enum End {
        case file(String)
        case device(AudioDeviceInfo)
    }

    public let chain: ListeningChain
    /// One microphone feeding two ears (the amplification's two fittings).
    public let twoEars: Bool
    public let stop: ManagedAtomic<Bool>
    /// Hears each alert as it begins and ends.
    private let announce: (AlertEventTracker.Change) -> Void
    /// The alerts heard so far, as they ended.
    public private(set) var heard: [AlertEvent] = []
    private var sounding = 0
    /// Says what runs, and live every 10 s the delay and glitches; nil says nothing.
    public let status: ((String) -> Void)?

    public init(chain: ListeningChain, twoEars: Bool, stop: ManagedAtomic<Bool>, status: ((String) -> Void)?,
                announce: @escaping (AlertEventTracker.Change) -> Void) {
        self.chain = chain
        self.twoEars = twoEars
        self.stop = stop
        self.status = status
        self.announce = announce
    }

    /// Device to device, the chain inside the device callback; this thread only reports, and
    /// with a hub feeds its live view from a tap on the microphone.
    public func live(from input: AudioDeviceInfo, to output: AudioDeviceInfo, latency: LiveLatency, hub: HubAddress?) throws {
        let feed = hub.map { LiveFeed(address: $0, sampleRate: ListeningChain.liveRate) }
        defer { feed?.close() }
        let path = try LiveAudioPath(
            processor: feed.map { ProcessorChain([$0.tap, chain]) } ?? ProcessorChain([chain]), input: input, output: output,
            sampleRate: ListeningChain.liveRate, inputChannels: 1, processChannels: twoEars ? 2 : 1,
            outputChannels: min(2, output.outputChannels), latency: latency)
        status?("\(chain.description) at \(ceilingText); \(input.name) → \(output.name), "
            + "\(path.isDuplex ? "one duplex stream" : "two streams"), \(path.callbackFrames) frames per callback at \(Int(path.sampleRate)) Hz, host buffers \(String(format: "%.1f", path.hostLatencySeconds * 1000)) ms")
        try path.start()
        var lastReport = Date()
        while !stop.load(ordering: .relaxed) {
            usleep(50_000)
            chain.detector?.takeChanges(hear)
            feed?.pump(alerting: sounding > 0)
            guard path.isRunning else {
                path.stop()
                throw EarshotError.deviceFailure("the audio device stopped (unplugged?)")
            }
            if Date().timeIntervalSince(lastReport) >= 10 {
                lastReport = Date()
                status?(Self.describe(path))
            }
        }
        let last = Self.describe(path)
        path.stop()
        status?(last)
    }

    /// A file at one end at least: block by block. A live end cannot wait for the future, so the
    /// delay stays in; file to file lines up. A file written keeps the rate it came at. Returns
    /// the sink written, to ask what it clipped.
    @discardableResult
    public func run(from input: End, to output: End) throws -> AudioSink {
        var source: AudioSource
        var fileRate: Double?
        switch input {
        case .file(let path):
            let reader = try AudioFileReader(path: path)
            let native = ListeningChain.nativeRate(for: reader.sampleRate)
            source = native == reader.sampleRate ? reader : try ResampledSource(reader, sampleRate: native)
            fileRate = reader.sampleRate
        case .device(let device):
            source = try DeviceCapture(device: device, sampleRate: ListeningChain.liveRate, channelCount: 1, stop: stop)
        }
        if twoEars {
            source = try ChannelMappedSource(try ChannelMappedSource(source, channelCount: 1), channelCount: 2)
        }
        let sink: AudioSink
        switch output {
        case .file(let path):
            let rate = fileRate ?? source.sampleRate
            let file = try AudioEndpoints().openSink(path, sampleRate: rate, channelCount: source.channelCount, sampleFormat: nil)
            sink = rate == source.sampleRate ? file : try ResampledSink(file, from: source.sampleRate, to: rate, channelCount: source.channelCount)
        case .device(let device):
            sink = try DevicePlayback(device: device, sampleRate: source.sampleRate, channelCount: min(source.channelCount, device.outputChannels))
        }
        let live: Bool = if case .file = input, case .file = output { false } else { true }
        let runner = Runner(blockFrames: live ? 64 : 1024, compensateLatency: !live, stop: stop,
                            progress: { [self] _ in chain.detector?.takeChanges(hear) })
        if let status {
            try chain.prepare(ProcessSpec(sampleRate: source.sampleRate, maximumBlockFrames: runner.blockFrames, channelCount: source.channelCount))
            let milliseconds = Double(chain.latencySamples) / source.sampleRate * 1000
            status("\(chain.description) at \(ceilingText); algorithmic delay \(String(format: "%.2f", milliseconds)) ms at \(Int(source.sampleRate)) Hz")
        }
        try runner.run(source: source, chain: chain, sink: sink)
        return sink
    }

    /// The end of the stream: alerts still sounding end here.
    public func finish() {
        chain.detector?.finish(hear)
    }

    private func hear(_ change: AlertEventTracker.Change) {
        switch change {
        case .began: sounding += 1
        case .ended(let event):
            sounding -= 1
            heard.append(event)
        }
        announce(change)
    }

    private var ceilingText: String {
        chain.outputGuard.map { String(format: "%.1f dBFS", $0.ceilingDBFS) } ?? "no ceiling"
    }

    private static func describe(_ path: LiveAudioPath) -> String {
        let counters = path.counters, rate = path.sampleRate
        return "delay \(path.latency.description); "
            + String(format: "underruns %d, overruns %d, resynchronised: %.1f ms dropped, %.1f ms repeated",
                     counters.underruns, counters.overruns, Double(counters.droppedFrames) / rate * 1000, Double(counters.repeatedFrames) / rate * 1000)
    }
}
