import EarshotAlerts
import EarshotCore
import EarshotHub
import EarshotHubClient
import EarshotSounds
import Foundation

/// The detectors, fed 100 ms at a time: the alert detector, the enrolled sounds (reloaded when
/// the store changes) and the last seconds of audio, kept for the not-my-doorbell button.
public final class Listening {
    public static let sampleRate = 16_000.0
    public static let blockFrames = 1600
    /// Heard audio kept: the longest sound announced is rarely longer.
    static let historySeconds = 12.0

    private let alertDetector: AlertDetector?
    private let store: SoundStore?
    private var soundDetector: SoundDetector?
    private var revision: String?
    private var lastCheck = Date()
    private var history: [Float] = []
    private var heardSamples = 0
    /// Sounds announced and still sounding: their event keys, to keep what was heard at the end.
    private var sounding: [String: String] = [:]
    /// The alert detector's generic doorbell, held a moment while sounds are enrolled: when the
    /// user's own doorbell is recognised too, its name is announced and the generic one is not.
    private var heldDoorbell: (event: AlertEvent, sessionStart: Date, heldAt: Double)?
    private var lastEnrolledSound = -Double.infinity
    static let doorbellHoldSeconds = 1.0
    /// Where what is heard is announced.
    public var fanOut: EventFanOut?
    /// Notes for the person running it (a reload, a store that cannot be written).
    public var note: (String) -> Void = { _ in }

    public init(network: AlertNetwork?, alertSettings: AlertEventTracker.Settings?, store: SoundStore?) throws {
        alertDetector = network.map { AlertDetector(network: $0, settings: alertSettings) }
        try alertDetector?.prepare(ProcessSpec(sampleRate: Self.sampleRate, maximumBlockFrames: Self.blockFrames, channelCount: 1))
        self.store = store
        try reloadSounds()
    }

    public var soundNames: [String] { soundDetector?.sounds.map(\.name) ?? [] }
    public var isAlerting: Bool { alertDetector?.isAlerting ?? false }

    /// A new stream (the device came back): its clock starts again at zero.
    public func restart() {
        alertDetector?.reset()
        soundDetector = soundDetector.map { SoundDetector(sounds: $0.sounds, embedding: $0.embedding) }
        history.removeAll(keepingCapacity: true)
        heardSamples = 0
        sounding = [:]
        heldDoorbell = nil
        lastEnrolledSound = -.infinity
    }

    private var now: Double { Double(heardSamples) / Self.sampleRate }

    public func hear(_ samples: ArraySlice<Float>, sessionStart: Date) {
        history.append(contentsOf: samples)
        heardSamples += samples.count
        let kept = Int(Self.historySeconds * Self.sampleRate)
        if history.count > 2 * kept { history.removeFirst(history.count - kept) }
        if let alertDetector {
            var copy = Array(samples)
            copy.withUnsafeMutableBufferPointer { pointer in
                var block = AudioBlock(base: pointer.baseAddress!, channelCount: 1, frameCount: pointer.count, channelStride: pointer.count)
                alertDetector.process(&block)
            }
            alertDetector.takeChanges { self.alertChanged($0, sessionStart: sessionStart) }
        }
        if let soundDetector {
            let ended = soundDetector.push(samples) { began in
                lastEnrolledSound = now
                heldDoorbell = nil
                if let key = fanOut?.announce(kind: .sound, label: began.sound, time: sessionStart.addingTimeInterval(began.start), confidence: began.score)?.key {
                    sounding[began.sound] = key
                }
            }
            for detection in ended { keepHeard(detection) }
        }
        if let held = heldDoorbell, now - held.heldAt >= Self.doorbellHoldSeconds { releaseDoorbell() }
        if Date().timeIntervalSince(lastCheck) >= 5 {
            lastCheck = Date()
            do { try reloadSounds() } catch { note("warning: cannot reload the enrolled sounds: \(error)") }
        }
    }

    /// The end of a stream: what is still sounding ends.
    public func finish() {
        releaseDoorbell()
        alertDetector?.finish { alertChanged($0, sessionStart: Date()) }
        for detection in soundDetector?.finish() ?? [] { keepHeard(detection) }
    }

    private func alertChanged(_ change: AlertEventTracker.Change, sessionStart: Date) {
        switch change {
        case .began(let event) where event.alertClass == .doorbell && soundDetector != nil:
            // Recognised as an enrolled sound a moment ago: already announced by its name.
            if now - lastEnrolledSound > Self.doorbellHoldSeconds { heldDoorbell = (event, sessionStart, now) }
            fanOut?.alertSounding(true)
        case .began(let event):
            fanOut?.announce(kind: .alert, label: event.alertClass.rawValue, time: sessionStart.addingTimeInterval(event.start), confidence: event.confidence)
            fanOut?.alertSounding(true)
        case .ended:
            fanOut?.alertSounding(false)
        }
    }

    /// A held doorbell no enrolled sound claimed: announced, with the time it began.
    private func releaseDoorbell() {
        guard let (event, sessionStart, _) = heldDoorbell else { return }
        heldDoorbell = nil
        fanOut?.announce(kind: .alert, label: event.alertClass.rawValue, time: sessionStart.addingTimeInterval(event.start), confidence: event.confidence)
    }

    /// From a second and a half before the announcement to the end of the sound.
    private func keepHeard(_ detection: SoundDetection) {
        guard let key = sounding.removeValue(forKey: detection.sound), let store else { return }
        let now = Double(heardSamples) / Self.sampleRate
        let seconds = min(Self.historySeconds, now - detection.start + 1.5)
        let clip = Array(history.suffix(Int(seconds * Self.sampleRate)))
        do { try store.keepHeard(key: key, sound: detection.sound, samples: clip) } catch {
            note("warning: cannot keep what was heard: \(error)")
        }
    }

    private func reloadSounds() throws {
        guard let store else { return }
        let now = try store.revision()
        guard now != revision else { return }
        let embedding = try SoundEmbedding.bundled()
        let loaded = try store.loadSounds(threshold: nil, embedding: embedding)
        if revision != nil { note("enrolled sounds changed: \(loaded.map(\.name).joined(separator: ", "))") }
        revision = now
        // A sound mid-announcement keeps its key; a removed one is forgotten.
        sounding = sounding.filter { name, _ in loaded.contains { $0.name == name } }
        soundDetector = loaded.isEmpty ? nil : SoundDetector(sounds: loaded, embedding: embedding)
    }
}
