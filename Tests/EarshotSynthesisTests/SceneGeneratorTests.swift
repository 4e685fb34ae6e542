import EarshotAlerts
import EarshotSynthesis
import EarshotCore
import Foundation
import Testing

@Suite struct SceneGeneratorTests {
    let rate = 16_000.0

    /// Stand-in material: "speech" as harmonic bursts, one "recorded" noise, one measured room.
    var material: SceneMaterial {
        var random = SeededRandom(seed: 99)
        let speech: [[Float]] = (0..<6).map { (k: Int) -> [Float] in
            let pitch = Double(k + 2) * 0.05
            return (0..<8000).map { (n: Int) -> Float in
                let x = Double(n)
                return Float(0.3 * sin(x * pitch) * sin(x * 0.001))
            }
        }
        let noise = (0..<32_000).map { _ in Float(random.nextGaussian() * 0.1) }
        var room = [Float](repeating: 0, count: 800)
        room[0] = 1
        room[400] = 0.3
        return SceneMaterial(speech: speech, noises: [("hiss", noise)], rooms: [("echo", room)])
    }

    @Test func labelsDescribeWhatWasPlaced() throws {
        let scene = try SceneGenerator.generate(seed: 4, durationSeconds: 30, sampleRate: rate, material: material, alertsPerMinute: 12)
        #expect(scene.samples.count == 30 * 16_000)
        #expect(scene.samples.allSatisfy { $0.isFinite && abs($0) <= 0.95 + 1e-6 })
        #expect(scene.labels.count >= 3)
        for (label, next) in zip(scene.labels, scene.labels.dropFirst()) {
            #expect(label.end <= next.start, "alerts do not overlap")
        }
        for label in scene.labels {
            #expect(label.start >= 0 && label.end <= 30 && label.end > label.start)
            #expect(label.snrDB >= -10 && label.snrDB <= 20)
            // Loud alerts stand out from the seconds before them.
            if label.snrDB > 10 && label.start > 1.5 {
                let before = level(scene.samples, from: label.start - 1.2, to: label.start - 0.2)
                let during = level(scene.samples, from: label.start, to: min(label.end, label.start + 1))
                #expect(during > before + 3, "\(label.alertClass) at \(label.start) s, \(label.snrDB) dB")
            }
        }
        #expect(Set(scene.labels.map(\.room)).count >= 2, "rooms vary")
    }

    @Test func alertTrackIsTheAlertsAsMixed() throws {
        let scene = try SceneGenerator.generate(seed: 5, durationSeconds: 30, sampleRate: rate, material: material, alertsPerMinute: 12)
        #expect(scene.alerts.count == scene.samples.count)
        // Quiet outside every labelled span: the lead-in and a room's tail lie 30 dB down.
        var inside = [Bool](repeating: false, count: scene.alerts.count)
        for label in scene.labels {
            for i in Int(label.start * rate)..<min(inside.count, Int((label.end + 1) * rate)) { inside[i] = true }
        }
        let peak = scene.alerts.map(abs).max() ?? 0
        #expect(peak > 0 && zip(scene.alerts, inside).allSatisfy { $1 || abs($0) < 0.03 * peak })
        // The rest of the mix is what lies under the alert: its level matches the label's SNR.
        for label in scene.labels where label.end - label.start > 0.5 {
            let alert = level(scene.alerts, from: label.start, to: label.end)
            let rest = level(zip(scene.samples, scene.alerts).map { $0 - $1 }, from: label.start, to: label.end)
            #expect(abs(alert - rest - label.snrDB) < 1, "\(label.alertClass) \(label.snrDB) dB: measured \(alert - rest)")
        }
    }

    func level(_ x: [Float], from start: Double, to end: Double) -> Double {
        let slice = x[Int(start * rate)..<Int(end * rate)]
        return 10 * log10(slice.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(slice.count) + 1e-20)
    }

    @Test func sameSeedSameScene() throws {
        let a = try SceneGenerator.generate(seed: 9, durationSeconds: 10, sampleRate: rate, material: material)
        let b = try SceneGenerator.generate(seed: 9, durationSeconds: 10, sampleRate: rate, material: material)
        let c = try SceneGenerator.generate(seed: 10, durationSeconds: 10, sampleRate: rate, material: material)
        #expect(a.samples == b.samples && a.labels == b.labels && a.samples != c.samples)
        #expect(throws: SynthesisError.self) { try SceneGenerator.generate(seed: 1, durationSeconds: 0, sampleRate: rate, material: material) }
    }

    @Test func worksWithNothingRecorded() throws {
        let scene = try SceneGenerator.generate(seed: 2, durationSeconds: 20, sampleRate: rate, material: SceneMaterial(), alertsPerMinute: 12)
        #expect(!scene.labels.isEmpty && scene.samples.contains { $0 != 0 })
    }

    @Test func alertFreeScenesHaveNoAlerts() throws {
        let scene = try SceneGenerator.generate(seed: 3, durationSeconds: 20, sampleRate: rate, material: material, alertsPerMinute: 0)
        #expect(scene.labels.isEmpty && scene.alerts.allSatisfy { $0 == 0 } && scene.samples.contains { $0 != 0 })
        #expect(throws: SynthesisError.self) { try SceneGenerator.generate(seed: 3, durationSeconds: 20, sampleRate: rate, material: material, alertsPerMinute: -1) }
    }
}
