import Atomics
import CHostAudio
import CPortAudio
import EarshotCore
import Foundation

/// An input or output device as PortAudio reports it.
public struct AudioDeviceInfo: Codable, Equatable, Sendable {
    public var index: Int
    public var name: String
    public var hostAPI: String
    public var inputChannels: Int
    public var outputChannels: Int
    public var defaultSampleRate: Double
    public var isDefaultInput: Bool
    public var isDefaultOutput: Bool
}

public enum DeviceDirection: String, Sendable {
    case input, output
}

/// The machine's audio devices (ALSA, PulseAudio, JACK, Core Audio, … behind PortAudio).
public enum AudioDevices {
    /// PortAudio is initialised once per process. Host back ends (ALSA above all) print
    /// diagnostics straight to stderr while probing and on every glitch; those are muted so
    /// the only words a user sees are Earshot's.
    private static let initialization: Result<Void, EarshotError> = withStandardErrorMuted {
        earshot_silence_host_audio_diagnostics()
        let status = Pa_Initialize()
        return status == paNoError.rawValue
            ? .success(()) : .failure(.deviceFailure(String(cString: Pa_GetErrorText(status))))
    }

    static func ensureInitialized() throws {
        try initialization.get()
    }

    /// Looks at the machine again, for a device that was unplugged and came back (PortAudio
    /// lists devices once, when it starts). Every stream must be closed first.
    public static func rescan() throws {
        try ensureInitialized()
        let status = withStandardErrorMuted {
            Pa_Terminate()
            return Pa_Initialize()
        }
        guard status == paNoError.rawValue else { throw EarshotError.deviceFailure(String(cString: Pa_GetErrorText(status))) }
    }

    public static func all() throws -> [AudioDeviceInfo] {
        try ensureInitialized()
        let count = Int(Pa_GetDeviceCount())
        guard count >= 0 else { throw EarshotError.deviceFailure(String(cString: Pa_GetErrorText(PaError(count)))) }
        let defaultInput = Int(Pa_GetDefaultInputDevice()), defaultOutput = Int(Pa_GetDefaultOutputDevice())
        return (0..<count).compactMap { index in
            guard let info = Pa_GetDeviceInfo(PaDeviceIndex(index))?.pointee else { return nil }
            let host = Pa_GetHostApiInfo(info.hostApi)?.pointee.name.map { String(cString: $0) } ?? "unknown"
            return AudioDeviceInfo(
                index: index, name: String(cString: info.name), hostAPI: host,
                inputChannels: Int(info.maxInputChannels), outputChannels: Int(info.maxOutputChannels),
                defaultSampleRate: info.defaultSampleRate,
                isDefaultInput: index == defaultInput, isDefaultOutput: index == defaultOutput)
        }
    }

    /// The device a user named: its index, or a case-insensitive part of its name; nil means
    /// the system default for that direction.
    public static func find(_ query: String?, direction: DeviceDirection) throws -> AudioDeviceInfo {
        let candidates = try all().filter { direction == .input ? $0.inputChannels > 0 : $0.outputChannels > 0 }
        guard !candidates.isEmpty else { throw EarshotError.noDevices(direction: direction.rawValue) }
        guard let query, !query.isEmpty else {
            let preferred = candidates.first { direction == .input ? $0.isDefaultInput : $0.isDefaultOutput }
            return preferred ?? candidates[0]
        }
        if let index = Int(query), let match = candidates.first(where: { $0.index == index }) { return match }
        if let match = candidates.first(where: { $0.name.range(of: query, options: .caseInsensitive) != nil }) {
            return match
        }
        throw EarshotError.deviceNotFound(query)
    }
}

/// Runs `body` with file descriptor 2 pointed at /dev/null.
func withStandardErrorMuted<T>(_ body: () -> T) -> T {
    fflush(nil)  // every C stream, stderr among them
    let saved = dup(STDERR_FILENO)
    let null = open("/dev/null", O_WRONLY)
    if saved >= 0 && null >= 0 { dup2(null, STDERR_FILENO) }
    defer {
        if saved >= 0 {
            dup2(saved, STDERR_FILENO)
            close(saved)
        }
        if null >= 0 { close(null) }
    }
    return body()
}

/// What a device callback may touch: the ring buffer and counters, nothing else.
final class DeviceCallbackContext: @unchecked Sendable {
    let ring: RingBuffer
    let channelCount: Int
    /// Samples that did not fit (capture) or were missing (playback): reported after a run.
    let glitchedSamples = ManagedAtomic<Int>(0)

    init(ring: RingBuffer, channelCount: Int) {
        self.ring = ring
        self.channelCount = channelCount
    }

    /// Capture: device → ring. Real-time safe.
    func capture(_ input: UnsafePointer<Float>, frames: Int) {
        let count = frames * channelCount
        let written = ring.write(UnsafeBufferPointer(start: input, count: count))
        if written < count { glitchedSamples.wrappingIncrement(by: count - written, ordering: .relaxed) }
    }

    /// Playback: ring → device, silence for whatever is missing. Real-time safe.
    func play(_ output: UnsafeMutablePointer<Float>, frames: Int) {
        let count = frames * channelCount
        let read = ring.read(into: UnsafeMutableBufferPointer(start: output, count: count))
        if read < count {
            (output + read).update(repeating: 0, count: count - read)
            glitchedSamples.wrappingIncrement(by: count - read, ordering: .relaxed)
        }
    }
}

private func captureCallback(
    input: UnsafeRawPointer?, output: UnsafeMutableRawPointer?, frames: UInt,
    time: UnsafePointer<PaStreamCallbackTimeInfo>?, flags: PaStreamCallbackFlags, userData: UnsafeMutableRawPointer?
) -> Int32 {
    if let input, let userData {
        Unmanaged<DeviceCallbackContext>.fromOpaque(userData)._withUnsafeGuaranteedRef {
            $0.capture(input.assumingMemoryBound(to: Float.self), frames: Int(frames))
        }
    }
    return Int32(paContinue.rawValue)
}

private func playbackCallback(
    input: UnsafeRawPointer?, output: UnsafeMutableRawPointer?, frames: UInt,
    time: UnsafePointer<PaStreamCallbackTimeInfo>?, flags: PaStreamCallbackFlags, userData: UnsafeMutableRawPointer?
) -> Int32 {
    if let output, let userData {
        Unmanaged<DeviceCallbackContext>.fromOpaque(userData)._withUnsafeGuaranteedRef {
            $0.play(output.assumingMemoryBound(to: Float.self), frames: Int(frames))
        }
    }
    return Int32(paContinue.rawValue)
}

/// An open PortAudio stream in one direction, moving interleaved Float32 through a ring.
final class DeviceStream {
    let device: AudioDeviceInfo
    let context: DeviceCallbackContext
    private var stream: UnsafeMutableRawPointer?

    /// `steady`: ask the host for its safe latency instead of its lowest (see `DevicePlayback`).
    init(device: AudioDeviceInfo, direction: DeviceDirection, sampleRate: Double, channelCount: Int, bufferSeconds: Double, steady: Bool = false) throws {
        try EarshotError.validate(sampleRate: sampleRate)
        try EarshotError.validate(channelCount: channelCount)
        let available = direction == .input ? device.inputChannels : device.outputChannels
        guard channelCount <= available else {
            throw EarshotError.deviceFailure("'\(device.name)' has \(available) \(direction.rawValue) channel(s), not \(channelCount)")
        }
        self.device = device
        context = DeviceCallbackContext(
            ring: RingBuffer(minimumCapacity: Int(sampleRate * bufferSeconds) * channelCount), channelCount: channelCount)
        let info = Pa_GetDeviceInfo(PaDeviceIndex(device.index))!.pointee
        var parameters = PaStreamParameters(
            device: PaDeviceIndex(device.index), channelCount: Int32(channelCount), sampleFormat: PaSampleFormat(paFloat32),
            suggestedLatency: direction == .input
                ? (steady ? info.defaultHighInputLatency : info.defaultLowInputLatency)
                : (steady ? info.defaultHighOutputLatency : info.defaultLowOutputLatency),
            hostApiSpecificStreamInfo: nil)
        let userData = Unmanaged.passUnretained(context).toOpaque()
        var opened: UnsafeMutableRawPointer?
        let status = withStandardErrorMuted {
            direction == .input
                ? Pa_OpenStream(&opened, &parameters, nil, sampleRate, 0, PaStreamFlags(paNoFlag), captureCallback, userData)
                : Pa_OpenStream(&opened, nil, &parameters, sampleRate, 0, PaStreamFlags(paNoFlag), playbackCallback, userData)
        }
        guard status == paNoError.rawValue, let opened else {
            throw EarshotError.deviceFailure("cannot open '\(device.name)' at \(Int(sampleRate)) Hz: \(String(cString: Pa_GetErrorText(status)))")
        }
        stream = opened
    }

    func start() throws {
        let status = Pa_StartStream(stream)
        guard status == paNoError.rawValue else {
            throw EarshotError.deviceFailure("cannot start '\(device.name)': \(String(cString: Pa_GetErrorText(status)))")
        }
    }

    /// False once the host has stopped the stream (the device went away, the server died).
    var isActive: Bool { stream.map { Pa_IsStreamActive($0) == 1 } ?? false }

    func close() {
        guard let stream else { return }
        Pa_StopStream(stream)
        Pa_CloseStream(stream)
        self.stream = nil
    }

    deinit { close() }
}

/// Capture from an input device. The callback only fills the ring; `read` runs on the
/// caller's thread and waits for a block's worth of frames.
public final class DeviceCapture: AudioSource {
    public let sampleRate: Double
    public let channelCount: Int
    private let stream: DeviceStream
    private var interleaved: [Float] = []
    private let stopRequested: ManagedAtomic<Bool>
    private let stallSeconds: Double

    /// `stallSeconds`: `read` throws when the device has delivered nothing for this long (it
    /// was unplugged, or its sound server died) instead of waiting for ever.
    public init(device: AudioDeviceInfo, sampleRate: Double, channelCount: Int, stop: ManagedAtomic<Bool>, stallSeconds: Double = .infinity) throws {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        stopRequested = stop
        self.stallSeconds = stallSeconds
        stream = try DeviceStream(device: device, direction: .input, sampleRate: sampleRate, channelCount: channelCount, bufferSeconds: 2)
        try stream.start()
    }

    /// Samples lost because the reader fell behind.
    public var overflowSamples: Int { stream.context.glitchedSamples.load(ordering: .relaxed) }

    public func read(into block: AudioBlock) throws -> Int {
        let needed = block.frameCount * channelCount
        if interleaved.count < needed { interleaved = [Float](repeating: 0, count: needed) }
        var available = stream.context.ring.availableToRead, lastProgress = Date()
        while available < needed {
            if stopRequested.load(ordering: .relaxed) { return 0 }
            usleep(1000)
            let now = stream.context.ring.availableToRead
            if now > available {
                available = now
                lastProgress = Date()
            } else if !stream.isActive || Date().timeIntervalSince(lastProgress) > stallSeconds {
                throw EarshotError.deviceFailure("'\(stream.device.name)' stopped delivering audio")
            }
        }
        interleaved.withUnsafeMutableBufferPointer { _ = stream.context.ring.read(into: UnsafeMutableBufferPointer(rebasing: $0[..<needed])) }
        for frame in 0..<block.frameCount {
            for c in 0..<channelCount { block.channel(c)[frame] = interleaved[frame * channelCount + c] }
        }
        return block.frameCount
    }

    public func close() { stream.close() }
}

/// Playback to an output device. `write` waits for room in the ring; the callback drains
/// it and plays silence if it ever runs dry.
public final class DevicePlayback: AudioSink {
    public let sampleRate: Double
    public let channelCount: Int
    private let stream: DeviceStream
    private var interleaved: [Float] = []

    /// `steady`: a delay that holds, for a little more of it. At its lowest latency a sound
    /// server's buffer can run dry between two of our writes on a busy machine; it then plays a
    /// few milliseconds of silence, and everything after comes that much later, unseen here. At
    /// the host's safe latency (35 ms through PulseAudio, against 9) it did not, in any live start
    /// measured; what this ring then runs short is counted in `underrunSamples`.
    public init(device: AudioDeviceInfo, sampleRate: Double, channelCount: Int, steady: Bool = false) throws {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        stream = try DeviceStream(device: device, direction: .output, sampleRate: sampleRate, channelCount: channelCount, bufferSeconds: 0.5, steady: steady)
        try stream.start()
    }

    /// Samples the device wanted but did not get in time.
    public var underrunSamples: Int { stream.context.glitchedSamples.load(ordering: .relaxed) }

    public func write(_ block: AudioBlock) throws {
        let count = block.frameCount * channelCount
        if interleaved.count < count { interleaved = [Float](repeating: 0, count: count) }
        for frame in 0..<block.frameCount {
            for c in 0..<channelCount { interleaved[frame * channelCount + c] = block.channel(c)[frame] }
        }
        var offset = 0
        while offset < count {
            offset += interleaved.withUnsafeBufferPointer {
                stream.context.ring.write(UnsafeBufferPointer(rebasing: $0[offset..<count]))
            }
            if offset < count { usleep(1000) }
        }
    }

    /// Waits until everything written has been played, and leaves the device open (playing
    /// silence) for more.
    public func drain() {
        while stream.context.ring.availableToRead > 0 { usleep(2000) }
        usleep(100_000)  // the device's own buffer
    }

    /// Waits until everything written has been played, then closes the device.
    public func finish() throws {
        drain()
        stream.close()
    }

    public func discard() { stream.close() }
}
