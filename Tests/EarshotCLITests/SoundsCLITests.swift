import EarshotCore
import EarshotIO
import EarshotSounds
import EarshotTestSupport
import Foundation
import Testing

/// A seeded stand-in for a doorbell recording: quiet room noise, a two-note chime, quiet again.
func chimeRecording(seed: UInt64 = 1, rate: Double = 44_100, channels: Int = 2, quietBefore: Double = 0.8, gain: Float = 0.3) -> [[Float]] {
    var random = SeededRandom(seed: seed)
    let total = Int(rate * (quietBefore + 0.8 + 0.7))
    var mono = (0..<total).map { _ in Float(random.nextGaussian() * 0.001) }
    for (index, frequency) in [660.0, 550.0].enumerated() {
        let start = Int(rate * (quietBefore + 0.4 * Double(index)))
        for n in 0..<Int(rate * 0.4) {
            let t = Double(n) / rate
            mono[start + n] += gain * Float(exp(-t * 5) * (sin(2 * .pi * frequency * t) + 0.4 * sin(2 * .pi * 3 * frequency * t)))
        }
    }
    return Array(repeating: mono, count: channels)
}

func writeWAV(_ channels: [[Float]], rate: Double, to url: URL) throws {
    try AudioFile.write(AudioBuffer(channels: channels), to: url.path, sampleRate: rate)
}

@Suite struct EnrollmentClipTests {
    @Test func cutsTheSoundWithItsMargins() throws {
        let recording = chimeRecording(rate: 16_000, channels: 1)[0]
        let clip = try EnrollmentClip(mono: recording, sampleRate: 16_000, clippedFraction: 0, source: "chime")
        // The chime is 0.8 s (its last decay falls under the room's floor a little earlier).
        #expect(clip.soundSeconds > 0.6 && clip.soundSeconds <= 0.82, "\(clip.soundSeconds)")
        #expect(abs(Double(clip.samples.count) / 16_000 - (clip.soundSeconds + 0.5)) < 0.05)
        #expect(clip.contrastDB > 40)
    }

    /// What users have is accepted: a doorbell file that begins at the sound's onset and rings
    /// out to silence over 4 s, one that is all sound (cut tight around a chime), and knocks,
    /// which hold nothing tonal.
    @Test func acceptsWhatUsersHave() throws {
        let rate = 16_000.0
        var random = SeededRandom(seed: 8)
        let ringOut = (0..<Int(rate * 4.5)).map { n -> Float in
            let t = Double(n) / rate
            return Float(0.5 * exp(-1.5 * t) * (sin(2 * .pi * 880 * t) + 0.5 * sin(2 * .pi * 2_640 * t)) + random.nextGaussian() * 1e-5)
        }
        let allSound = (0..<Int(rate * 1.2)).map { n -> Float in
            let t = Double(n) / rate
            return Float(0.4 * (sin(2 * .pi * (t < 0.6 ? 660 : 550) * t) + 0.3 * sin(2 * .pi * 1_980 * t)))
        }
        var knocks = (0..<Int(rate * 2)).map { _ in Float(random.nextGaussian() * 0.001) }
        for knock in [0.3, 0.55, 0.8] {
            for n in 0..<800 { knocks[Int(knock * rate) + n] += Float(random.nextGaussian() * 0.4 * exp(-Double(n) / 120)) }
        }
        for (name, recording) in [("ring-out", ringOut), ("all sound", allSound), ("knocks", knocks)] {
            let clip = try EnrollmentClip(mono: recording, sampleRate: rate, clippedFraction: 0, source: name)
            #expect(clip.soundSeconds > 0.3, "\(name): \(clip.soundSeconds) s")
        }
    }
}

@Suite(.serialized) struct SoundsCLITests {
    @Test func enrollListRemoveAndTheHubShowsThem() async throws {
        try await withTemporaryDirectoryAsync { dir in
            try writeWAV(chimeRecording(seed: 1), rate: 44_100, to: dir.appendingPathComponent("ring1.wav"))
            try writeWAV(chimeRecording(seed: 2, rate: 48_000, channels: 1, quietBefore: 1.2, gain: 0.1), rate: 48_000, to: dir.appendingPathComponent("ring2.wav"))
            try writeWAV([(0..<32_000).map { _ in Float(0.002) * Float.random(in: -1...1) }], rate: 16_000, to: dir.appendingPathComponent("room.wav"))
            let enrolled = try earshot("sounds", "enroll", "front_door", "ring1.wav", "ring2.wav", "--room-tone", "room.wav", "--data", "store", in: dir)
            #expect(enrolled.status == 0 && enrolled.stdout.contains("enrolled 'front_door' from 2 recording(s)"), "\(enrolled.stderr)")
            let listed = try earshot("sounds", "list", "--format", "json", "--data", "store", in: dir)
            let sounds = try JSONSerialization.jsonObject(with: listed.stdoutData) as! [[String: Any]]
            #expect(sounds.count == 1 && sounds[0]["name"] as? String == "front_door" && sounds[0]["recordings"] as? Int == 2)
            #expect(sounds[0]["roomTone"] as? Bool == true && sounds[0]["rejected"] as? Int == 0)

            // The hub keeps them in the same file and shows them.
            let hub = try RunningHub(directory: dir.appendingPathComponent("store"))
            let reply = try await hub.request(.GET, "/api/sounds", token: hub.token)
            #expect(reply.status == 200 && reply.body.contains(#""name":"front_door""#))
            #expect(try await hub.request(.GET, "/api/sounds").status == 401)

            #expect(try earshot("sounds", "remove", "front_door", "--data", "store", in: dir).status == 0)
            let again = try earshot("sounds", "remove", "front_door", "--data", "store", in: dir)
            #expect(again.status == 2 && again.stderr.contains("no sound named 'front_door'"))
            #expect(try earshot("sounds", "list", "--data", "store", in: dir).stdout.contains("no sounds enrolled"))
        }
    }

    /// Every bad recording is refused with its reason in one line, and nothing is stored.
    @Test func badRecordingsAreRefusedWithTheReason() throws {
        try withTemporaryDirectory { dir in
            let rate = 16_000.0
            var random = SeededRandom(seed: 5)
            try writeWAV([[Float](repeating: 0, count: 32_000)], rate: rate, to: dir.appendingPathComponent("silent.wav"))
            try writeWAV([(0..<32_000).map { _ in Float(random.nextGaussian() * 1e-5) }], rate: rate, to: dir.appendingPathComponent("faint.wav"))
            try writeWAV([chimeRecording(rate: rate, channels: 1)[0].prefix(4000).map { $0 }], rate: rate, to: dir.appendingPathComponent("short.wav"))
            try writeWAV(chimeRecording(rate: rate, channels: 1, gain: 4).map { $0.map { max(-1, min(1, $0)) } }, rate: rate,
                         to: dir.appendingPathComponent("clipped.wav"))
            try writeWAV([(0..<48_000).map { _ in Float(random.nextGaussian() * 0.05) }], rate: rate, to: dir.appendingPathComponent("noise.wav"))
            try Data("RIFF....WAVEfmt ".utf8).write(to: dir.appendingPathComponent("corrupt.wav"))
            try writeWAV(chimeRecording(), rate: 44_100, to: dir.appendingPathComponent("good.wav"))
            let cases: [([String], String)] = [
                (["bell", "silent.wav"], "digital silence"),
                (["bell", "faint.wav"], "silent (the loudest moment is"),
                (["bell", "short.wav"], "too short"),
                (["bell", "clipped.wav"], "clipped"),
                (["bell", "noise.wav"], "holds no distinct sound"),
                (["bell", "corrupt.wav"], "corrupt.wav"),
                (["bell", "missing.wav"], "no such file"),
                (["bell", "good.wav", "--room-tone", "short.wav"], "too short for room tone"),
                (["two words", "good.wav"], "letters, digits"),
                (["bell", "good.wav", "good.wav", "good.wav", "good.wav"], "one to three recordings"),
            ]
            for (arguments, reason) in cases {
                let result = try runProgram(earshotPath, ["sounds", "enroll"] + arguments + ["--data", "store"], directory: dir)
                #expect(result.status == 2 && result.stderr.contains(reason) && result.stderr.split(separator: "\n").count == 1,
                        "\(arguments) → \(result.status) \(result.stderr)")
            }
            #expect(try earshot("sounds", "list", "--format", "json", "--data", "store", in: dir).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
            #expect(try earshot("sounds", "enroll", "bell", "good.wav", "--data", "store", in: dir).status == 0)
            let twice = try earshot("sounds", "enroll", "bell", "good.wav", "--data", "store", in: dir)
            #expect(twice.status == 2 && twice.stderr.contains("already enrolled"))
        }
    }
}

/// A seeded scene at 16 kHz: noise with a slow level wobble, and `chime` notes (Hz) starting at
/// `at` seconds, `snr` dB above the noise.
func chimeScene(notes: [Double], at onset: Double = 4, seconds: Double = 10, snr: Double, seed: UInt64) -> [Float] {
    let rate = 16_000.0
    var random = SeededRandom(seed: seed)
    var brown: Float = 0
    var scene = (0..<Int(rate * seconds)).map { n -> Float in
        brown = 0.98 * brown + Float(random.nextGaussian() * 0.02)  // a reddish room noise
        return brown * Float(1 + 0.3 * sin(2 * .pi * 0.3 * Double(n) / rate))
    }
    let noiseRMS = sqrt(scene.reduce(0) { $0 + $1 * $1 } / Float(scene.count))
    var chime = [Float](repeating: 0, count: Int(rate * 0.4) * notes.count)
    for (index, frequency) in notes.enumerated() {
        for n in 0..<Int(rate * 0.4) {
            let t = Double(n) / rate
            chime[index * Int(rate * 0.4) + n] = Float(exp(-t * 5) * (sin(2 * .pi * frequency * t) + 0.4 * sin(2 * .pi * 3 * frequency * t)))
        }
    }
    let chimeRMS = sqrt(chime.prefix(Int(rate * 0.2)).reduce(0) { $0 + $1 * $1 } / Float(rate * 0.2))
    let gain = noiseRMS / chimeRMS * Float(pow(10, snr / 20))
    for (n, sample) in chime.enumerated() { scene[Int(rate * onset) + n] += gain * sample }
    return scene
}

@Suite(.serialized) struct SoundMatchingTests {
    /// Enrolled from one clean recording, the chime is found at 0–20 dB in noise within about a
    /// second of its start, by both matchers together, each alone, and the landmarks; another
    /// doorbell's chime is not, nor (by the landmarks) a lone beep at one of its notes.
    @Test func findsTheChimeAndNotItsLookalikes() throws {
        try withTemporaryDirectory { dir in
            try writeWAV(chimeRecording(seed: 3), rate: 44_100, to: dir.appendingPathComponent("ring.wav"))
            #expect(try earshot("sounds", "enroll", "front_door", "ring.wav", "--data", "s", in: dir).status == 0)
            func detections(_ samples: [Float], _ name: String, method: String = "landmarks") throws -> [[String: Any]] {
                try writeWAV([samples], rate: 16_000, to: dir.appendingPathComponent(name))
                let result = try earshot("sounds", "detect", name, "--data", "s", "--format", "jsonl", "--method", method, in: dir)
                #expect(result.status == 0, "\(result.stderr)")
                return result.stdout.split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
            }
            // The learned matcher announces a second after the chime begins, the others sooner.
            // The templates alone hold on to the chime at 20 dB; under this reddish noise at 10 dB
            // and less its short, fast-decaying notes barely stand out, and the learned matcher
            // carries the combined one.
            let all = [(1, 20.0), (2, 10.0), (3, 0.0)]
            for (method, latest, scenes) in [("combined", 5.6, all), ("embedding", 5.6, all), ("template", 5.6, [all[0]]), ("landmarks", 5.0, all)] {
                for (seed, snr) in scenes {
                    let found = try detections(chimeScene(notes: [660, 550], snr: snr, seed: UInt64(seed)), "ring-\(Int(snr)).wav", method: method)
                    #expect(found.count == 1 && found[0]["sound"] as? String == "front_door", "\(method), \(snr) dB: \(found)")
                    if let start = found.first?["start"] as? Double { #expect(start > 4 && start < latest, "\(method), \(snr) dB: announced at \(start) s") }
                }
                #expect(try detections(chimeScene(notes: [880, 740], snr: 10, seed: 4), "other-bell.wav", method: method).isEmpty, "\(method)")
            }
            // A lone beep at its first note is not the chime to the landmarks, which want the whole
            // of it; the learned matcher, which matches any part, takes it for the chime.
            #expect(try detections(chimeScene(notes: [660], snr: 10, seed: 5), "beep.wav", method: "landmarks").isEmpty)
            // The original method finds the clean chime by its two strongest peaks.
            let clean = chimeRecording(seed: 3, rate: 16_000, channels: 1)[0]
            #expect(try detections(clean, "clean.wav", method: "peaks").count >= 1)
        }
    }

    /// "Not my doorbell": a rejected false alarm raises the sound's threshold above it.
    @Test func aRejectedFalseAlarmDoesNotComeBack() throws {
        try withTemporaryDirectory { dir in
            try writeWAV(chimeRecording(seed: 3), rate: 44_100, to: dir.appendingPathComponent("ring.wav"))
            #expect(try earshot("sounds", "enroll", "front_door", "ring.wav", "--data", "s", in: dir).status == 0)
            // The same chime, faint under noise, from a television: the user says it is not theirs.
            try writeWAV([chimeScene(notes: [660, 550], snr: -3, seed: 9)], rate: 16_000, to: dir.appendingPathComponent("maybe.wav"))
            let before = try earshot("sounds", "detect", "maybe.wav", "--data", "s", "--format", "jsonl", in: dir)
            #expect(before.stdout.contains("front_door"))
            let rejected = try earshot("sounds", "reject", "front_door", "maybe.wav", "--data", "s", in: dir)
            #expect(rejected.status == 0 && rejected.stdout.contains("will not be announced"), "\(rejected.stderr)")
            #expect(try earshot("sounds", "detect", "maybe.wav", "--data", "s", "--format", "jsonl", in: dir).stdout.isEmpty)
            // The doorbell itself, clearly heard, still is.
            try writeWAV([chimeScene(notes: [660, 550], snr: 15, seed: 10)], rate: 16_000, to: dir.appendingPathComponent("ring-15.wav"))
            #expect(try earshot("sounds", "detect", "ring-15.wav", "--data", "s", "--format", "jsonl", in: dir).stdout.contains("front_door"))
            let listed = try earshot("sounds", "list", "--format", "json", "--data", "s", in: dir)
            #expect(listed.stdout.contains(#""rejected":1"#))
            let unknown = try earshot("sounds", "reject", "back_door", "maybe.wav", "--data", "s", in: dir)
            #expect(unknown.status == 2 && unknown.stderr.contains("no sound named 'back_door'"))
        }
    }
}
