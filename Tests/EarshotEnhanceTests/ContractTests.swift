import EarshotCore
import EarshotEnhance
import EarshotTestSupport
import Testing

/// The noise suppressor, both models, both native rates, through the shared processor contract.
@Suite struct SuppressorContractTests {
    @Test(arguments: [NoiseSuppressor.Model.learned, .classic], [16_000.0, 48_000.0])
    func suppressorKeepsTheContract(model: NoiseSuppressor.Model, rate: Double) throws {
        let contract = ProcessorContract(sampleRate: rate) { try NoiseSuppressor(model: model) }
        try expectKept(contract)
    }

    @Test func separatingSuppressorKeepsTheContract() throws {
        // An alert held sounding: the separator works on every frame.
        let contract = ProcessorContract(sampleRate: 48_000) {
            let suppressor = try NoiseSuppressor(separatesAlerts: true)
            suppressor.alertSounding = true
            return suppressor
        }
        try expectKept(contract)
    }
}
