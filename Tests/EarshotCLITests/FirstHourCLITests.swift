import EarshotCore
import EarshotIO
import EarshotTestSupport
import Foundation
import Testing

/// What a person trying Earshot for the first time trips on: a mistyped command, a negative
/// number, a command that says nothing, a hint naming a file that is not there.
@Suite struct FirstHourCLITests {
    @Test func aMistypedCommandGetsTheNearestName() throws {
        let root = try earshot("enhnce", "a.wav")
        #expect(root.status == 2 && root.stderr == "earshot: no command 'enhnce' in earshot (did you mean 'enhance'?); 'earshot --help' lists them\n", "\(root.stderr)")
        let nested = try earshot("sounds", "enrol", "front_door", "ring.wav")
        #expect(nested.status == 2 && nested.stderr.contains("did you mean 'enroll'?"), "\(nested.stderr)")
        let far = try earshot("xyzzy")
        #expect(far.status == 2 && far.stderr.contains("no command 'xyzzy'") && !far.stderr.contains("did you mean"), "\(far.stderr)")
        #expect(try earshot("help", "enhance").status == 0)
    }

    /// `--strength -5` is a value out of range, not a missing one.
    @Test func aNegativeNumberIsAValue() throws {
        try withTemporaryDirectory { dir in
            try AudioFile.write(AudioBuffer(channels: [noise(count: 16_000, seed: 1, amplitude: 0.1)]), to: dir.appendingPathComponent("a.wav").path, sampleRate: 16_000)
            let refused = try earshot("enhance", "a.wav", "-o", "b.wav", "--strength", "-5", in: dir)
            #expect(refused.status == 2 && refused.stderr.contains("--strength is the most noise is reduced, 0–40 dB, not -5"), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("b.wav").path))
            // A negative value in range gets past the parser (then the missing file stops it).
            let floor = try earshot("aec", "--mic", "none.wav", "--far", "none.wav", "-o", "out.wav", "--suppression-floor", "-30", in: dir)
            #expect(floor.status == 2 && floor.stderr.contains("none.wav") && !floor.stderr.contains("Missing value"), "\(floor.stderr)")
        }
    }

    /// `enhance` says what it wrote; `detect` says when it heard the whole file and found nothing.
    @Test func successIsSaid() throws {
        try withTemporaryDirectory { dir in
            try AudioFile.write(AudioBuffer(channels: [noise(count: 32_000, seed: 2, amplitude: 0.05)]), to: dir.appendingPathComponent("hiss.wav").path, sampleRate: 16_000)
            let enhanced = try earshot("enhance", "hiss.wav", "-o", "clean.wav", in: dir)
            #expect(enhanced.status == 0 && enhanced.stderr.contains("Enhanced hiss.wav → clean.wav") && enhanced.stdout.isEmpty, "\(enhanced.stderr)")
            let detected = try earshot("detect", "hiss.wav", in: dir)
            #expect(detected.status == 0 && detected.stdout.isEmpty && detected.stderr.contains("No alerts") && detected.stderr.contains("2.0 s heard"), "\(detected.stderr)")
        }
    }

    /// The demo's closing hint names a file that exists: the one it was told to keep.
    @Test func theDemoHintNamesAKeptFile() throws {
        try withTemporaryDirectory { dir in
            let kept = try earshot("demo", "-o", "my scene.wav", in: dir)
            #expect(kept.status == 0 && kept.stdout.contains("Try: earshot listen 'my scene.wav'"), "\(kept.stdout.suffix(300))")
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("my scene.wav").path))
            let plain = try earshot("demo", in: dir)
            #expect(plain.stdout.contains("earshot demo -o scene.wav keeps the scene"), "\(plain.stdout.suffix(300))")
        }
    }

    /// Asked for a doorbell, with no seed, one hears a ding-dong chime.
    @Test func aDoorbellIsAChime() throws {
        try withTemporaryDirectory { dir in
            let made = try earshot("synth", "alert", "--class", "doorbell", "-o", "bell.wav", in: dir)
            #expect(made.status == 0 && made.stderr.hasPrefix("doorbell chime"), "\(made.stderr)")
        }
    }
}
