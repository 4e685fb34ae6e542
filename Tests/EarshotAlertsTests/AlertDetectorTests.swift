import EarshotCore
@testable import EarshotAlerts
import EarshotTestSupport
import Foundation
import Testing

struct ParityFixture: Decodable {
    var sampleCount: Int
    var frames: [[Float]]
    var frameIndices: [Int]
    var windowEnds: [Int]
    var probabilities: [[Float]]
}

/// The shipped detector's safetensors file split into its JSON header and its tensors' bytes,
/// so a test can change the header (metadata, a tensor appended to the bytes) and load the result.
struct ShippedDetectorFile {
    let header: [String: Any]
    let body: Data
    let tensors: SafeTensors

    init() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/EarshotAlerts/Resources/AlertDetector.safetensors")
        let bytes = try Data(contentsOf: url)
        let length = bytes.prefix(8).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        header = try #require(try JSONSerialization.jsonObject(with: bytes.subdata(in: 8..<(8 + length))) as? [String: Any])
        body = bytes.subdata(in: (8 + length)..<bytes.count)
        tensors = try SafeTensors(data: bytes)
    }

    /// A network from `header` and `body`.
    static func network(header: [String: Any], body: Data) throws -> AlertNetwork {
        try AlertNetwork(safeTensors(header: header, body: body))
    }
}

@Suite struct AlertDetectorTests {
    func fixture() throws -> ParityFixture {
        let url = try #require(Bundle.module.url(forResource: "detector_parity", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode(ParityFixture.self, from: Data(contentsOf: url))
    }

    /// Features, window by window, and the network's probabilities, against what the training
    /// script computed from the same signal (features in float64 there, float32 here).
    @Test func matchesTheTrainingScript() throws {
        let expected = try fixture()
        let signal = paritySignal(count: expected.sampleCount)
        let network = try AlertNetwork.bundled()
        var features = AlertFeatures(windowFrames: network.windowFrames)
        var frames: [Int: [Float]] = [:]
        var outputs: [Int: [Float]] = [:]
        var row = [Float](repeating: 0, count: 2 * AlertFeatures.melCount)
        var input = [Float](repeating: 0, count: features.inputCount)
        var probabilities = [Float](repeating: 0, count: AlertNetwork.classes.count)
        signal.withUnsafeBufferPointer { samples in
            features.push(samples) { features in
                let index = features.frameCount - 1
                if expected.frameIndices.contains(index) {
                    row.withUnsafeMutableBufferPointer { features.latestFrame(into: $0) }
                    frames[index] = row
                }
                if expected.windowEnds.contains(index) {
                    input.withUnsafeMutableBufferPointer { features.window(into: $0.baseAddress!) }
                    network.classify(input, probabilities: &probabilities)
                    outputs[index] = probabilities
                }
            }
        }
        #expect(features.frameCount == expected.sampleCount / AlertFeatures.hop)
        for (index, reference) in zip(expected.frameIndices, expected.frames) {
            let ours = try #require(frames[index])
            let worst = zip(ours, reference).map { abs($0 - $1) }.max()!
            #expect(worst < 1e-3, "frame \(index): features differ by \(worst) (log10 units)")
        }
        for (index, reference) in zip(expected.windowEnds, expected.probabilities) {
            let ours = try #require(outputs[index])
            let worst = zip(ours, reference).map { abs($0 - $1) }.max()!
            #expect(worst <= 1e-4, "window ending at frame \(index): probabilities differ by \(worst)")
        }
    }

    /// Any way of cutting the stream into blocks gives the same decisions.
    @Test func blockSizeDoesNotMatter() throws {
        let signal = paritySignal(count: 40_000)
        let network = try AlertNetwork.bundled()
        func decisions(block: Int) -> [Float] {
            var features = AlertFeatures(windowFrames: network.windowFrames)
            var out: [Float] = []
            var input = [Float](repeating: 0, count: features.inputCount)
            var p = [Float](repeating: 0, count: 5)
            for start in stride(from: 0, to: signal.count, by: block) {
                signal[start..<min(signal.count, start + block)].withUnsafeBufferPointer { chunk in
                    features.push(chunk) { features in
                        guard features.frameCount % 5 == 0 else { return }
                        input.withUnsafeMutableBufferPointer { features.window(into: $0.baseAddress!) }
                        network.classify(input, probabilities: &p)
                        out += p
                    }
                }
            }
            return out
        }
        let reference = decisions(block: 40_000)
        #expect(reference.count == 40_000 / 320 / 5 * 5)
        for block in [1, 63, 320, 1000] { #expect(decisions(block: block) == reference, "block \(block)") }
    }

    /// A classification worked through a step at a time gives what one pass gives, in steps
    /// small enough for a 64-frame block, and a decision lands before the next one is due.
    @Test func aClassificationInStepsIsTheSame() throws {
        let network = try AlertNetwork.bundled()
        let inference = AlertInference(network: network)
        var random = SeededRandom(seed: 5)
        let input = (0..<network.inputCount).map { _ in Float.random(in: -2...2, using: &random) }
        var whole = [Float](repeating: 0, count: AlertNetwork.classes.count), stepped = whole
        network.classify(input, probabilities: &whole)
        inference.input.update(from: input, count: network.inputCount)
        inference.start()
        var steps = 0
        while inference.isRunning {
            inference.step()
            steps += 1
        }
        inference.probabilities(into: &stepped)
        #expect(zip(whole, stepped).allSatisfy { abs($0 - $1) <= 1e-6 }, "\(whole) \(stepped)")
        #expect(steps == inference.stepCount && steps >= 8, "\(steps) steps")
        // Decisions are 100 ms (1600 samples) apart: each lands before the next begins.
        let detector = AlertDetector(network: network)
        #expect(detector.decisionDelaySeconds > 0 && detector.decisionDelaySeconds < 0.05)
        #expect(inference.stepCount * AlertDetector.stepSamples < 5 * AlertFeatures.hop)
    }

    /// A detector reset after one stream decides on the next exactly as a new detector would.
    @Test func resetStartsAfresh() throws {
        let signal = paritySignal(count: 64_000)
        let network = try AlertNetwork.bundled()
        func events(_ detector: AlertDetector) throws -> [AlertEvent] {
            let buffer = AudioBuffer(channels: [signal])
            var block = buffer.block()
            try detector.prepare(ProcessSpec(sampleRate: 16_000, maximumBlockFrames: signal.count, channelCount: 1))
            detector.process(&block)
            var out: [AlertEvent] = []
            detector.finish { if case .ended(let e) = $0 { out.append(e) } }
            return out
        }
        let used = AlertDetector(network: network)
        let first = try events(used)
        #expect(!first.isEmpty, "the parity signal's keyed tone is announced")
        #expect(try events(used) == first)
        #expect(try events(AlertDetector(network: network)) == first)
    }

    @Test func trackerNeedsPersistenceAndBridgesPauses() {
        var tracker = AlertEventTracker()
        var changes: [AlertEventTracker.Change] = []
        func feed(_ siren: Float, for seconds: Double, from start: Double) -> Double {
            var p: [Float] = [1 - siren, siren, 0, 0, 0]
            var t = start
            while t < start + seconds - 1e-9 {
                t += 0.1
                tracker.update(probabilities: &p, time: t) { changes.append($0) }
            }
            return t
        }
        var t = feed(0, for: 2, from: 0)
        t = feed(1, for: 0.2, from: t)  // a blip: two decisions
        t = feed(0, for: 1, from: t)
        #expect(changes.isEmpty, "a 0.2 s blip is smoothed away")
        t = feed(1, for: 1, from: t)  // began at 3.2 s
        #expect(changes.count == 1)
        guard case .began(let event)? = changes.first else { Issue.record("no onset"); return }
        #expect(event.alertClass == .siren && event.start > 3.3 && event.start < 3.8)
        t = feed(0, for: 1.5, from: t)  // a temporal-three pause
        t = feed(1, for: 1, from: t)
        #expect(changes.count == 1, "a 1.5 s pause does not end the event")
        t = feed(0, for: 4, from: t)
        #expect(changes.count == 2)
        guard case .ended(let ended) = changes[1] else { Issue.record("no end"); return }
        #expect(abs(ended.end - 6.9) < 0.25 && ended.confidence > 0.9)
    }

    /// A decision the network is sure of is announced at once; one merely over its class's
    /// threshold holds for the minimum duration first; a sure threshold under the class's own
    /// announces nothing the class's threshold would not.
    @Test func aSureDecisionIsAnnouncedAtOnce() {
        func onset(_ siren: Float, sure: Float?, threshold: Float = 0.9) -> Double? {
            var settings = AlertEventTracker.Settings(thresholds: [.siren: threshold])
            settings.smoothing = 1
            settings.minimumSeconds = 0.2
            settings.sureThreshold = sure
            var tracker = AlertEventTracker(settings: settings)
            var quiet: [Float] = [1, 0, 0, 0, 0], p: [Float] = [1 - siren, siren, 0, 0, 0]
            var began: Double?
            for step in 1...10 { tracker.update(probabilities: &quiet, time: Double(step) / 10) { _ in } }
            for step in 11...20 {
                tracker.update(probabilities: &p, time: Double(step) / 10) { if case .began(let e) = $0, began == nil { began = e.start } }
            }
            return began
        }
        #expect(onset(0.999, sure: 0.995).map { abs($0 - 1.1) < 1e-9 } == true, "sure: the first decision")
        #expect(onset(0.97, sure: 0.995).map { abs($0 - 1.3) < 1e-9 } == true, "over the threshold: after 0.2 s")
        #expect(onset(0.999, sure: nil).map { abs($0 - 1.3) < 1e-9 } == true, "no sure threshold: after 0.2 s")
        #expect(onset(0.8, sure: 0.5) == nil, "under the class's own threshold, sure or not")
        #expect(onset(0.95, sure: 0.5, threshold: 0.9).map { abs($0 - 1.1) < 1e-9 } == true)
    }

    /// A class smoothed over its own depth: 0.97 after 1 s of quiet passes a 0.95 threshold at
    /// the first decision unsmoothed, at the third over three decisions, then holds 0.2 s. The
    /// other classes keep the usual depth, whichever of the two is deeper.
    @Test func aClassMayBeSmoothedOnItsOwn() {
        func onset(of alertClass: AlertClass, smoothing: Int, sirenSmoothing: Int?) -> Double? {
            var settings = AlertEventTracker.Settings(thresholds: [.siren: 0.95, .doorbell: 0.95])
            settings.smoothing = smoothing
            settings.classSmoothing[0] = sirenSmoothing
            var tracker = AlertEventTracker(settings: settings)
            var quiet: [Float] = [1, 0, 0, 0, 0]
            var p: [Float] = [0.03, 0, 0, 0, 0]
            p[AlertNetwork.classes.firstIndex(of: alertClass.rawValue)!] = 0.97
            var began: Double?
            for step in 1...10 { tracker.update(probabilities: &quiet, time: Double(step) / 10) { _ in } }
            for step in 11...20 {
                tracker.update(probabilities: &p, time: Double(step) / 10) { if case .began(let e) = $0, began == nil { began = e.start } }
            }
            return began
        }
        func near(_ time: Double?, _ expected: Double) -> Bool { time.map { abs($0 - expected) < 1e-9 } == true }
        #expect(near(onset(of: .siren, smoothing: 3, sirenSmoothing: nil), 1.5))
        #expect(near(onset(of: .siren, smoothing: 3, sirenSmoothing: 1), 1.3), "unsmoothed: two decisions sooner")
        #expect(near(onset(of: .doorbell, smoothing: 3, sirenSmoothing: 1), 1.5), "the other classes as before")
        #expect(near(onset(of: .doorbell, smoothing: 1, sirenSmoothing: 3), 1.3))
        #expect(near(onset(of: .siren, smoothing: 1, sirenSmoothing: 3), 1.5), "deeper than the rest")
    }

    /// The tracker announces what the training script's tracker (`train.track`, with which the
    /// operating point is chosen) announces: the same classes at the same moments, for seeded
    /// decision streams under operating points with per-class smoothing, the sure threshold and
    /// the sustained route (training/tracker_fixture.py).
    @Test func tracksAsTheTrainingScriptDoes() throws {
        struct Case: Decodable {
            var thresholds: [Float], smoothing: [Int], minimum: Double, sure: Float?
            var sustainedDecisions: Int, sustained: [Float], decisions: [[Int]], events: [[Double]]
        }
        struct Fixture: Decodable { var step: Double, scale: Float, cases: [Case] }
        let url = try #require(Bundle.module.url(forResource: "tracker_parity", withExtension: "json", subdirectory: "Fixtures"))
        let fixture = try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
        #expect(fixture.cases.count == 20 && fixture.cases.map(\.events.count).reduce(0, +) >= 40)
        for (n, given) in fixture.cases.enumerated() {
            var settings = AlertEventTracker.Settings()
            settings.onThresholds = given.thresholds
            settings.smoothing = given.smoothing.max()!
            settings.classSmoothing = given.smoothing
            settings.minimumSeconds = given.minimum
            settings.sureThreshold = given.sure
            settings.sustainedDecisions = given.sustainedDecisions
            settings.sustainedThresholds = given.sustained.map { $0 < 0 ? .infinity : $0 }
            var tracker = AlertEventTracker(settings: settings)
            var began: [(AlertClass, Double)] = []
            for (t, row) in given.decisions.enumerated() {
                var p = row.map { Float($0) / fixture.scale }
                tracker.update(probabilities: &p, time: Double(t + 1) * fixture.step) {
                    if case .began(let e) = $0 { began.append((e.alertClass, e.start)) }
                }
            }
            let expected = given.events.map { (AlertClass.allCases[Int($0[0]) - 1], $0[1]) }
            #expect(began.map(\.0) == expected.map(\.0), "stream \(n)")
            #expect(began.count == expected.count && zip(began, expected).allSatisfy { abs($0.1 - $1.1) < 1e-6 }, "stream \(n)")
        }
    }

    /// A siren that follows a car horn is announced while the horn's event is still held (in
    /// traffic the horn must not hide it), as soon as it would be alone; the horn, still held,
    /// is not announced again.
    @Test func anAlertAfterAnotherIsAnnounced() {
        var tracker = AlertEventTracker(settings: .init(thresholds: [.siren: 0.9, .carHorn: 0.9]))
        var began: [(AlertClass, Double)] = []
        func feed(_ p: [Float], from start: Int, to end: Int) {
            var p = p
            for step in start...end {
                tracker.update(probabilities: &p, time: Double(step) / 10) { if case .began(let e) = $0 { began.append((e.alertClass, e.start)) } }
            }
        }
        feed([0.05, 0, 0, 0.95, 0], from: 1, to: 5)    // a horn, 0.5 s
        feed([0.02, 0.97, 0, 0.01, 0], from: 6, to: 15)  // then a siren, within the horn's hold
        #expect(began.map(\.0) == [.carHorn, .siren])
        // Smoothed over three decisions it passes 0.9 at 0.8 s, and holds 0.2 s: as if alone.
        #expect(began.last.map { abs($0.1 - 1.0) < 1e-9 } == true, "the siren is announced as it would be alone")
        feed([0.05, 0.03, 0, 0.92, 0], from: 16, to: 20)  // the horn again, its event still held
        #expect(began.count == 2, "a class already announced does not begin again")
    }

    /// The sustained route: a siren the network gives 0.85 for seconds on end never reaches a
    /// 0.99 on-threshold, but its 2 s mean reaches 0.8 once 19 of the last 20 decisions hear it
    /// (2.9 s, the siren beginning at 1.1 s). Without the route it is never announced; a class
    /// made less sensitive is so by both routes; a class that is not the most likely over the 2 s
    /// does not begin by it.
    @Test func aSirenHeardForSecondsIsAnnouncedBelowItsThreshold() {
        func onset(_ sound: [Float], _ configure: (inout AlertEventTracker.Settings) -> Void) -> Double? {
            var settings = AlertEventTracker.Settings(thresholds: [.siren: 0.99, .smokeAlarm: 0.99])
            settings.sustainedThresholds[0] = 0.8
            configure(&settings)
            var tracker = AlertEventTracker(settings: settings)
            var began: Double?
            for step in 1...40 {
                var p: [Float] = step <= 10 ? [0.95, 0.05, 0, 0, 0] : sound
                tracker.update(probabilities: &p, time: Double(step) / 10) {
                    if case .began(let e) = $0, e.alertClass == .siren, began == nil { began = e.start }
                }
            }
            return began
        }
        let siren: [Float] = [0.15, 0.85, 0, 0, 0]
        #expect(onset(siren) { _ in }.map { abs($0 - 2.9) < 1e-9 } == true)
        #expect(onset(siren) { $0.sustainedThresholds[0] = .infinity } == nil, "no route, no announcement")
        #expect(onset(siren) { $0.move(.siren, to: 0.999) }.map { abs($0 - 2.9) < 1e-9 } == true)
        #expect(onset(siren) { $0.onThresholds[0] = 0.9; $0.move(.siren, to: 0.99) } == nil,
                "raised by 0.09, the sustained threshold is 0.89: above what the siren holds")
        #expect(onset([0.05, 0.45, 0.5, 0, 0]) { $0.sustainedThresholds[0] = 0.4 } == nil,
                "a smoke alarm is likelier over the 2 s")
    }

    /// Each class has its own on-threshold: a siren at 0.9 stays silent under a 0.95 threshold
    /// while a doorbell at 0.6 is announced under 0.5; the shipped network carries its own.
    @Test func thresholdsArePerClass() throws {
        var tracker = AlertEventTracker(settings: .init(thresholds: [.siren: 0.95, .doorbell: 0.5]))
        #expect(tracker.settings[threshold: .smokeAlarm] == 0.6, "classes not named keep the default")
        var began: [AlertClass] = []
        var siren: [Float] = [0.1, 0.9, 0, 0, 0]
        var doorbell: [Float] = [0.4, 0, 0, 0, 0.6]
        for step in 1...30 { tracker.update(probabilities: &siren, time: Double(step) / 10) { if case .began(let e) = $0 { began.append(e.alertClass) } } }
        #expect(began.isEmpty)
        for step in 31...60 { tracker.update(probabilities: &doorbell, time: Double(step) / 10) { if case .began(let e) = $0 { began.append(e.alertClass) } } }
        #expect(began == [.doorbell])

        #expect(try AlertNetwork.thresholds("siren=0.9, doorbell=0.85") == [.siren: 0.9, .doorbell: 0.85])
        for bad in ["siren", "siren=1.2", "siren=0", "bell=0.5", "siren=0.5,siren=0.6", "siren=x"] {
            #expect(throws: ModelError.self, "\(bad)") { try AlertNetwork.thresholds(bad) }
        }
        let network = try AlertNetwork.bundled()
        let shipped = network.defaultThresholds
        #expect(Set(shipped.keys) == Set(AlertClass.allCases), "the shipped network names its operating point")
        #expect(shipped.values.allSatisfy { $0 > 0.5 && $0 < 1 })
        #expect((1...10).contains(network.defaultSettings.smoothing))
        #expect(AlertClass.allCases.allSatisfy { network.defaultSettings[threshold: $0] == shipped[$0] })
    }

    /// The smoothing, minimum duration, sure threshold and sustained route the operating point was chosen with,
    /// and the window the network was trained on, come with the model; a model without them
    /// gets the tracker's defaults (and a 1 s window), and nonsensical ones are refused.
    @Test func theModelCarriesItsSmoothingMinimumAndWindow() throws {
        let file = try ShippedDetectorFile()
        let shipped = file.header["__metadata__"] as? [String: String] ?? [:]
        func model(smoothing: String?, minimum: String? = nil, window: String? = shipped["window"],
                   sure: String? = nil, sustained: String? = nil, sustainedDecisions: String? = nil,
                   classSmoothing: String? = nil) throws -> AlertNetwork {
            var metadata = shipped
            metadata["smoothing"] = smoothing
            metadata["class_smoothing"] = classSmoothing
            metadata["minimum"] = minimum
            metadata["window"] = window
            metadata["sure"] = sure
            metadata["sustained"] = sustained
            metadata["sustained_decisions"] = sustainedDecisions
            var header = file.header
            header["__metadata__"] = metadata
            return try ShippedDetectorFile.network(header: header, body: file.body)
        }
        #expect(try model(smoothing: "2").defaultSettings.smoothing == 2)
        #expect(try model(smoothing: nil).defaultSettings.smoothing == AlertEventTracker.Settings().smoothing)
        for bad in ["0", "11", "two", ""] {
            #expect(throws: ModelError.self, "\(bad)") { try model(smoothing: bad) }
        }
        #expect(try model(smoothing: "2", classSmoothing: "siren=1").defaultSettings.classSmoothing == [1, nil, nil, nil])
        #expect(try model(smoothing: "2").defaultSettings.classSmoothing == [nil, nil, nil, nil])
        for bad in ["siren", "siren=0", "siren=11", "bell=1", "siren=1,siren=2", "siren=one"] {
            #expect(throws: ModelError.self, "\(bad)") { try model(smoothing: "2", classSmoothing: bad) }
        }
        #expect(throws: ModelError.perClass(key: "class_smoothing", .twice("siren"))) {
            try model(smoothing: "2", classSmoothing: "siren=1,siren=2")
        }
        #expect(try model(smoothing: "2", minimum: "0.1").defaultSettings.minimumSeconds == 0.1)
        #expect(try model(smoothing: "2", minimum: nil).defaultSettings.minimumSeconds == AlertEventTracker.Settings().minimumSeconds)
        for bad in ["-0.1", "3", "soon", "nan"] {
            #expect(throws: ModelError.self, "\(bad)") { try model(smoothing: "2", minimum: bad) }
        }
        #expect(try model(smoothing: "2", sure: "0.995").defaultSettings.sureThreshold == 0.995)
        #expect(try model(smoothing: "2", sure: nil).defaultSettings.sureThreshold == nil)
        for bad in ["0", "1.5", "nan", "always"] {
            #expect(throws: ModelError.self, "\(bad)") { try model(smoothing: "2", sure: bad) }
        }
        let lasting = try model(smoothing: "2", sustained: "siren=0.8", sustainedDecisions: "15").defaultSettings
        #expect(lasting.sustainedThresholds == [0.8, .infinity, .infinity, .infinity] && lasting.sustainedDecisions == 15)
        let none = try model(smoothing: "2").defaultSettings
        #expect(none.sustainedThresholds.allSatisfy(\.isInfinite) && none.sustainedDecisions == AlertEventTracker.Settings().sustainedDecisions)
        for bad in ["siren", "siren=1.5", "horn=0.8"] {
            #expect(throws: ModelError.self, "\(bad)") { try model(smoothing: "2", sustained: bad) }
        }
        for bad in ["1", "101", "long"] {
            #expect(throws: ModelError.self, "\(bad)") { try model(smoothing: "2", sustainedDecisions: bad) }
        }
        // The convolutions and global pooling take any length: the window is the model's to say.
        let longer = try model(smoothing: "2", window: "150")
        #expect(longer.windowFrames == 150)
        #expect(try model(smoothing: "2", window: nil).windowFrames == AlertFeatures.defaultWindowFrames)
        var features = AlertFeatures(windowFrames: longer.windowFrames)
        var input = [Float](repeating: 0, count: features.inputCount)
        var p = [Float](repeating: 0, count: AlertNetwork.classes.count)
        paritySignal(count: 48_000).withUnsafeBufferPointer { samples in
            features.push(samples) { _ in }
        }
        input.withUnsafeMutableBufferPointer { features.window(into: $0.baseAddress!) }
        longer.classify(input, probabilities: &p)
        #expect(abs(p.reduce(0, +) - 1) < 1e-4 && p.allSatisfy { $0.isFinite })
        for bad in ["7", "501", "long", ""] {
            #expect(throws: ModelError.self, "\(bad)") { try model(smoothing: "2", window: bad) }
        }
    }

    /// A model may have an output after the classes for background with music in it; the
    /// detector hears it as background. The shipped network's five class outputs, and the same
    /// with the background output split in two equal halves (a copy, both lowered by ln 2),
    /// classify alike; other names after the classes, or a head without the row its classes
    /// promise, are refused.
    @Test func aMusicOutputIsHeardAsBackground() throws {
        let file = try ShippedDetectorFile()
        let weight = try #require(file.tensors.tensors["head.weight"]), bias = try #require(file.tensors.tensors["head.bias"])
        let width = weight.shape[1]
        // The new head goes after the shipped tensors' bytes; the old one is left unread.
        let outputs = AlertNetwork.classes.count
        func model(classes: String, split: Bool = true) throws -> AlertNetwork {
            var header = file.header, body = file.body
            var rows = Array(weight.values.prefix(outputs * width)), biases = Array(bias.values.prefix(outputs))
            if split {
                rows += weight.values.prefix(width)
                biases += [biases[0]]
                for k in [0, biases.count - 1] { biases[k] -= Float(log(2.0)) }
            }
            for (name, values, shape) in [("head.weight", rows, [biases.count, width]), ("head.bias", biases, [biases.count])] {
                header[name] = ["dtype": "F32", "shape": shape, "data_offsets": [body.count, body.count + 4 * values.count]]
                body += values.withUnsafeBytes { Data($0) }
            }
            var metadata = try #require(header["__metadata__"] as? [String: String])
            metadata["classes"] = classes
            header["__metadata__"] = metadata
            return try ShippedDetectorFile.network(header: header, body: body)
        }
        let classes = AlertNetwork.classes.joined(separator: ",")
        let music = try model(classes: classes + ",music")
        let network = try model(classes: classes, split: false)
        var features = AlertFeatures(windowFrames: network.windowFrames)
        var input = [Float](repeating: 0, count: features.inputCount)
        paritySignal(count: 48_000).withUnsafeBufferPointer { samples in features.push(samples) { _ in } }
        input.withUnsafeMutableBufferPointer { features.window(into: $0.baseAddress!) }
        var heard = [Float](repeating: 0, count: outputs), expected = heard
        music.classify(input, probabilities: &heard)
        network.classify(input, probabilities: &expected)
        #expect(zip(heard, expected).allSatisfy { abs($0 - $1) < 1e-5 }, "\(heard) against \(expected)")
        #expect(expected[1...].contains { $0 > 0.01 }, "the parity signal is heard as some alert, so the check has teeth")
        for bad in [classes + ",speech", classes + ",music,music", "siren,background,smoke_alarm,car_horn,doorbell,music"] {
            #expect(throws: ModelError.self, "\(bad)") { try model(classes: bad) }
        }
        #expect(throws: ModelError.self) { try model(classes: classes + ",music", split: false) }
    }

    /// Separation opens on a likely alert before (and without) an announcement; it closes once
    /// no class is that likely and nothing is announced.
    @Test func separationOpensBelowTheAnnouncementThreshold() {
        var tracker = AlertEventTracker(settings: .init(thresholds: [.siren: 0.95]))
        var likely: [Float] = [0.6, 0.4, 0, 0, 0]
        var quiet: [Float] = [0.9, 0.1, 0, 0, 0]
        var announced = false
        for step in 1...10 { tracker.update(probabilities: &likely, time: Double(step) / 10) { _ in announced = true } }
        #expect(tracker.isAlerting && !announced)
        for step in 11...13 { tracker.update(probabilities: &quiet, time: Double(step) / 10) { _ in announced = true } }
        #expect(!tracker.isAlerting && !announced)
    }

    @Test func refusesBrokenModels() throws {
        #expect(throws: ModelError.self) { try SafeTensors(data: Data([1, 2, 3])) }
        var header = Data("{\"x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}".utf8)
        var data = Data([UInt8(header.count), 0, 0, 0, 0, 0, 0, 0]) + header + Data(count: 8)  // 8 of 16 bytes
        #expect(throws: ModelError.self) { try SafeTensors(data: data) }
        data = Data([UInt8(header.count), 0, 0, 0, 0, 0, 0, 0]) + header + Data(count: 16)
        let model = try SafeTensors(data: data)
        #expect(try model.tensor("x", shape: [4]) == [0, 0, 0, 0])
        #expect(throws: ModelError.self) { try model.tensor("x", shape: [2, 2]) }
        #expect(throws: ModelError.self) { try AlertNetwork(model) }
        // A shape whose size overflows is refused, not trapped on.
        let huge = Data("{\"x\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4],\"data_offsets\":[0,16]}}".utf8)
        #expect(throws: ModelError.self) { try SafeTensors(data: Data([UInt8(huge.count), 0, 0, 0, 0, 0, 0, 0]) + huge + Data(count: 16)) }
        header = Data("{\"x\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]}}".utf8)
        #expect(throws: ModelError.self) { try SafeTensors(data: Data([UInt8(header.count), 0, 0, 0, 0, 0, 0, 0]) + header + Data(count: 8)) }
    }

    /// At 48 kHz the detector hears what it hears at 16 kHz: the decimator passes the band
    /// and stops what would alias.
    @Test func decimatorPassesTheBandAndStopsAliases() {
        func gainDB(_ hz: Double) -> Double {
            var decimator = Decimator(factor: 3)
            var x = (0..<48_000).map { Float(sin(2 * Double.pi * hz * Double($0) / 48_000)) }
            let count = x.withUnsafeMutableBufferPointer { decimator.process($0.baseAddress!, count: $0.count) }
            #expect(count == 16_000)
            let tail = x[8_000..<count]
            return 10 * log10(tail.reduce(0.0) { $0 + Double($1 * $1) } / Double(tail.count) / 0.5)
        }
        for hz in [100.0, 1000, 3000, 5500] { #expect(abs(gainDB(hz)) < 0.2, "\(hz) Hz") }
        #expect(abs(gainDB(6500)) < 1)
        for hz in [9500.0, 12_000, 20_000] { #expect(gainDB(hz) < -60, "\(hz) Hz") }
    }
}
