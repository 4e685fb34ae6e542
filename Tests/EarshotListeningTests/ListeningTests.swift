import EarshotAlerts
import EarshotCore
import EarshotHub
@testable import EarshotListening
import EarshotTestSupport
import Foundation
import Testing

/// A two-note chime (660 then 550 Hz, 0.4 s each, with a third harmonic), 16 kHz.
private func chime(gain: Float = 0.3) -> [Float] {
    (0..<12_800).map { n in
        let t = Double(n % 6400) / 16_000, f = n < 6400 ? 660.0 : 550.0
        return gain * Float(exp(-t * 5) * (sin(2 * .pi * f * t) + 0.4 * sin(2 * .pi * 3 * f * t)))
    }
}

/// `seconds` of quiet reddish room noise with the chime at each of `onsets`, 15 dB above it.
private func room(seconds: Double, chimesAt onsets: [Double]) -> [Float] {
    var random = SeededRandom(seed: 11)
    var brown: Float = 0
    var out = (0..<Int(16_000 * seconds)).map { _ -> Float in
        brown = 0.98 * brown + Float(random.nextGaussian() * 0.002)
        return brown
    }
    let noise = sqrt(out.reduce(0) { $0 + $1 * $1 } / Float(out.count))
    let ring = chime(gain: 1)
    let level = sqrt(ring.prefix(3200).reduce(0) { $0 + $1 * $1 } / 3200)
    for onset in onsets {
        for (n, sample) in ring.enumerated() { out[Int(onset * 16_000) + n] += sample * noise / level * 5.6 }
    }
    return out
}

@Suite struct EventFanOutTests {
    /// A label is announced at most once per cooldown; other labels are not held back by it.
    @Test func coolsDownEachLabel() {
        var written: [EventFanOut.Announcement] = []
        let fanOut = EventFanOut(poster: nil, bridge: nil, cooldown: 30, write: { written.append($0) })
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(fanOut.announce(kind: .sound, label: "front_door", time: t0, confidence: 0.8) != nil)
        #expect(fanOut.announce(kind: .sound, label: "front_door", time: t0.addingTimeInterval(10), confidence: 0.9) == nil)
        #expect(fanOut.announce(kind: .alert, label: "smoke_alarm", time: t0.addingTimeInterval(11), confidence: 0.9) != nil)
        #expect(fanOut.announce(kind: .sound, label: "front_door", time: t0.addingTimeInterval(31), confidence: 0.7) != nil)
        #expect(written.map(\.label) == ["front_door", "smoke_alarm", "front_door"])
        #expect(Set(written.map(\.key)).count == 3)
    }

    /// In the quiet hours sounds are announced quiet; alerts never are.
    @Test func quietHoursQuietSoundsNotAlerts() throws {
        var written: [EventFanOut.Announcement] = []
        let fanOut = EventFanOut(poster: nil, bridge: nil, quietHours: try QuietHours(start: "22:00", end: "07:00"),
                                 write: { written.append($0) })
        let night = try #require(Calendar.current.date(bySettingHour: 23, minute: 30, second: 0, of: Date()))
        let day = try #require(Calendar.current.date(bySettingHour: 12, minute: 0, second: 0, of: Date()))
        fanOut.announce(kind: .sound, label: "front_door", time: night, confidence: 0.8)
        fanOut.announce(kind: .alert, label: "siren", time: night, confidence: 0.8)
        fanOut.announce(kind: .sound, label: "kettle", time: day, confidence: 0.8)
        #expect(written.map(\.quiet) == [true, false, false])
    }
}

@Suite struct ListeningTests {
    /// With the alert detector on and no cooldown, each ring of an enrolled chime is one
    /// announcement, by its own name: never also as the detector's generic doorbell (which it
    /// is, to the detector, when nothing is enrolled).
    @Test func oneAnnouncementPerRingWithAlertsOn() throws {
        try withTemporaryDirectory { dir in
            let store = try SoundStore(path: dir.appendingPathComponent("hub.sqlite").path)
            let network = try AlertNetwork.bundled()
            let audio = room(seconds: 40, chimesAt: [3, 23])
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            func announced() throws -> [String] {
                let listening = try Listening(network: network, alertSettings: nil, store: store)
                var written: [String] = []
                listening.fanOut = EventFanOut(poster: nil, bridge: nil, cooldown: 0, write: { written.append($0.label) })
                for first in stride(from: 0, to: audio.count, by: Listening.blockFrames) {
                    listening.hear(audio[first..<min(audio.count, first + Listening.blockFrames)], sessionStart: start)
                }
                listening.finish()
                return written
            }
            #expect(try announced() == ["doorbell", "doorbell"])
            let clip = [Float](repeating: 0, count: 4000) + chime() + [Float](repeating: 0, count: 4000)
            try store.enroll("front_door", clips: [SoundStore.Clip(role: .enrollment, source: "ring.wav", samples: clip)])
            #expect(try announced() == ["front_door", "front_door"])
        }
    }

    /// In process, as `watch` runs it: an enrolled chime rung twice, 40 s apart, in a quiet room
    /// is announced twice by its name through the fan-out (once per ring, within the cooldown),
    /// what was heard is kept, and "not my doorbell" finds it.
    @Test func announcesAnEnrolledSoundOncePerRing() throws {
        try withTemporaryDirectory { dir in
            let store = try SoundStore(path: dir.appendingPathComponent("hub.sqlite").path)
            let clip = [Float](repeating: 0, count: 4000) + chime() + [Float](repeating: 0, count: 4000)
            try store.enroll("front_door", clips: [SoundStore.Clip(role: .enrollment, source: "ring.wav", samples: clip)])
            let listening = try Listening(network: nil, alertSettings: nil, store: store)
            #expect(listening.soundNames == ["front_door"])
            var written: [EventFanOut.Announcement] = []
            listening.fanOut = EventFanOut(poster: nil, bridge: nil, cooldown: 30, write: { written.append($0) })
            let audio = room(seconds: 50, chimesAt: [3, 3.9, 43])  // pressed twice, then again later
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            for first in stride(from: 0, to: audio.count, by: Listening.blockFrames) {
                listening.hear(audio[first..<min(audio.count, first + Listening.blockFrames)], sessionStart: start)
            }
            listening.finish()
            #expect(written.map(\.label) == ["front_door", "front_door"], "\(written)")
            if written.count == 2 {
                let delays = [written[0].time.timeIntervalSince(start) - 3, written[1].time.timeIntervalSince(start) - 43]
                #expect(delays.allSatisfy { $0 > 0 && $0 < 2 }, "announced \(delays) s after each ring began")
                #expect(try store.rejectHeard(key: written[1].key) == "front_door")
            }
        }
    }
}
