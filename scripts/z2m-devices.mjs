#!/usr/bin/env node
// A household's Zigbee2MQTT `bridge/devices` and `bridge/groups` payloads, built from the real
// device definitions in the npm package zigbee-herdsman-converters (the library Zigbee2MQTT
// resolves devices with), for crates/hearth-house's tests.
//
//   npm install --prefix /tmp/zhc zigbee-herdsman-converters@26.105.0
//   node scripts/z2m-devices.mjs /tmp/zhc > crates/hearth-house/tests/corpus/zigbee2mqtt/bridge-devices.json
//   node scripts/z2m-devices.mjs --groups /tmp/zhc > crates/hearth-house/tests/corpus/zigbee2mqtt/bridge-groups.json
//
// 26.105.0 is the version Zigbee2MQTT 2.14.1 depends on; another version prints a warning and
// may change the fixture (the tests then say what moved).
//
// What comes from the package: each device's definition, found as Zigbee2MQTT finds it
// (`findByDevice` on the device's Zigbee model id and manufacturer), and its `exposes`, called
// on the device when they are a function, plus the `linkquality` expose Zigbee2MQTT adds to
// every device; the unsupported device's definition is the one the package generates for an
// unknown model. What this script stands in for, as an interview would give it: addresses,
// friendly names, endpoints and their clusters. The payloads have the fields and the key order
// of Zigbee2MQTT 2.14.1's `lib/extension/bridge.ts` (`publishDevices`, `publishGroups`,
// `getDefinitionPayload`) and its stable stringify (keys sorted, `undefined` left out),
// indented for review.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";

const PINNED = "26.105.0";

const args = process.argv.slice(2);
const groupsOnly = args[0] === "--groups";
const prefix = groupsOnly ? args[1] : args[0];
if (!prefix) {
    console.error("usage: node scripts/z2m-devices.mjs [--groups] <npm prefix holding zigbee-herdsman-converters>");
    process.exit(2);
}
const require = createRequire(resolve(prefix, "node_modules", "noop.js"));
const zhcPackage = JSON.parse(readFileSync(require.resolve("zigbee-herdsman-converters/package.json"), "utf8"));
if (zhcPackage.version !== PINNED) {
    console.error(`warning: zigbee-herdsman-converters ${zhcPackage.version}, the fixture was made with ${PINNED}`);
}
const zhc = require("zigbee-herdsman-converters");
// The package logs to stdout by default: its warnings and errors go to stderr, the rest nowhere.
const toStderr = (level) => (message, namespace) => console.error(`${level} ${namespace}: ${typeof message === "function" ? message() : message}`);
zhc.setLogger({ debug: () => {}, info: () => {}, warning: toStderr("warning"), error: toStderr("error") });

// Cluster names as zigbee-herdsman reports them, for the endpoints' `clusters`.
const LIGHT = ["genBasic", "genIdentify", "genGroups", "genScenes", "genOnOff", "genLevelCtrl", "lightingColorCtrl", "touchlink"];
const GREEN_POWER = { id: 242, input: [], output: ["greenPower"] };

// The household: one entry per device, as its interview would have found it.
const HOUSE = [
    {
        ieee: "0x0017880108a3c1e2", nwk: 0x1a2b, type: "Router", name: "living_room/Ceiling Light",
        modelID: "LCA001", manufacturerName: "Signify Netherlands B.V.", manufacturerID: 4107, powerSource: "Mains (single phase)",
        softwareBuildID: "1.104.2", dateCode: "20230324",
        endpoints: [{ id: 11, input: [...LIGHT, "manuSpecificPhilips2"], output: ["genOta"] }, GREEN_POWER],
    },
    {
        ieee: "0x000d6ffffe7c3a11", nwk: 0x2c3d, type: "Router", name: "living_room/Floor Lamp",
        modelID: "TRADFRI bulb E27 WS opal 980lm", manufacturerName: "IKEA of Sweden", manufacturerID: 4476,
        powerSource: "Mains (single phase)", softwareBuildID: "2.3.093", dateCode: "20200122",
        endpoints: [{ id: 1, input: [...LIGHT, "manuSpecificIkeaUnknown"], output: ["genOta"] }],
    },
    {
        ieee: "0x000b57fffe8e4d10", nwk: 0x4e5f, type: "EndDevice", name: "Front Door",
        modelID: "YRD256 TSDB", manufacturerName: "Yale", manufacturerID: 4125, powerSource: "Battery",
        softwareBuildID: "3.0.0", dateCode: "20190207",
        endpoints: [{ id: 1, input: ["genBasic", "genPowerCfg", "genIdentify", "genAlarms", "genPollCtrl", "closuresDoorLock"], output: ["genOta", "genTime"] }],
    },
    {
        ieee: "0x0014d2fffe3a5b71", nwk: 0x6a7b, type: "EndDevice", name: "bedroom/Radiator",
        modelID: "eTRV0100", manufacturerName: "Danfoss", manufacturerID: 4678, powerSource: "Battery",
        softwareBuildID: "01.20.0008 01.20", dateCode: "20221103",
        endpoints: [{ id: 1, input: ["genBasic", "genPowerCfg", "genIdentify", "genTime", "genPollCtrl", "hvacThermostat", "hvacUserInterfaceCfg", "haDiagnostic"], output: ["genOta"] }],
    },
    {
        ieee: "0x588e81fffe1d2c3f", nwk: 0x7c8d, type: "EndDevice", name: "bedroom/Blind",
        modelID: "FYRTUR block-out roller blind", manufacturerName: "IKEA of Sweden", manufacturerID: 4476, powerSource: "Battery",
        softwareBuildID: "24.4.11", dateCode: "20210409",
        endpoints: [{ id: 1, input: ["genBasic", "genPowerCfg", "genIdentify", "genGroups", "genScenes", "genPollCtrl", "closuresWindowCovering", "manuSpecificIkeaUnknown"], output: ["genOta"] }],
    },
    {
        ieee: "0x3410f4fffe9a8b7c", nwk: 0x8e9f, type: "Router", name: "kitchen/Coffee Machine",
        modelID: "INSPELNING Smart plug", manufacturerName: "IKEA of Sweden", manufacturerID: 4476, powerSource: "Mains (single phase)",
        softwareBuildID: "2.4.45", dateCode: "20230609",
        endpoints: [{ id: 1, input: ["genBasic", "genIdentify", "genGroups", "genScenes", "genOnOff", "haElectricalMeasurement", "seMetering", "manuSpecificIkeaSmartPlug"], output: ["genOta"] }, GREEN_POWER],
    },
    {
        ieee: "0x00158d0001e8a2b3", nwk: 0x9aab, type: "Router", name: "home/kitchen/Wall Switch",
        modelID: "lumi.ctrl_ln2.aq1", manufacturerName: "LUMI", manufacturerID: 4447, powerSource: "Mains (single phase)",
        softwareBuildID: "09-06-2019", dateCode: "09-06-2019",
        endpoints: [
            { id: 1, input: ["genBasic", "genDeviceTempCfg", "genIdentify", "genGroups", "genScenes", "genOnOff", "genMultistateInput"], output: [] },
            { id: 2, input: ["genOnOff", "genMultistateInput"], output: [] },
            { id: 3, input: ["genAnalogInput"], output: [] },
        ],
    },
    {
        ieee: "0x00158d00045b6c7d", nwk: 0xabbc, type: "EndDevice", name: "bathroom/Climate Sensor",
        modelID: "lumi.weather", manufacturerName: "LUMI", manufacturerID: 4151, powerSource: "Battery",
        softwareBuildID: "3000-0001", dateCode: "20191205",
        endpoints: [{ id: 1, input: ["genBasic", "genIdentify", "msTemperatureMeasurement", "msPressureMeasurement", "msRelativeHumidity"], output: ["genGroups"] }],
    },
    // A model the package does not know: Zigbee2MQTT generates a definition and reports the
    // device as not supported.
    {
        ieee: "0xa4c13800d1e2f3a4", nwk: 0xbccd, type: "Router", name: "garage/Mystery Plug",
        modelID: "XYZ-0001", manufacturerName: "_TZ3000_unknown0", manufacturerID: 4417, powerSource: "Mains (single phase)",
        softwareBuildID: undefined, dateCode: undefined,
        endpoints: [{ id: 1, input: ["genBasic", "genIdentify", "genGroups", "genScenes", "genOnOff"], output: ["genOta", "genTime"] }],
    },
];

// Groups by friendly name, members by the devices' friendly names and endpoints.
const GROUPS = [
    { id: 1, name: "living_room/Lamps", members: [["living_room/Ceiling Light", 11], ["living_room/Floor Lamp", 1]] },
    { id: 2, name: "Downstairs", members: [["living_room/Ceiling Light", 11], ["kitchen/Coffee Machine", 1]] },
    { id: 3, name: "bedroom/Blinds", members: [["bedroom/Blind", 1]] },
    { id: 4, name: "kitchen/Switches", members: [["kitchen/Coffee Machine", 1], ["home/kitchen/Wall Switch", 1], ["home/kitchen/Wall Switch", 2]] },
    { id: 5, name: "Empty", members: [] },
];

const clusterId = (name) => {
    const cluster = zhc.Zcl?.Clusters?.[name] ?? require("zigbee-herdsman").Zcl.Clusters[name];
    return cluster ? cluster.ID : 0xfc00;
};

// The part of zigbee-herdsman's Device and Endpoint a definition's lookup and exposes read.
function zhDevice(entry) {
    const device = {
        ieeeAddr: entry.ieee, networkAddress: entry.nwk, type: entry.type, modelID: entry.modelID,
        manufacturerName: entry.manufacturerName, manufacturerID: entry.manufacturerID, powerSource: entry.powerSource,
        softwareBuildID: entry.softwareBuildID, dateCode: entry.dateCode, interviewState: "SUCCESSFUL",
        meta: {}, customClusters: {},
        getEndpoint: (id) => device.endpoints.find((e) => e.ID === id),
        save: () => {},
    };
    device.endpoints = entry.endpoints.map((e) => ({
        ID: e.id, profileID: e.id === 242 ? 0xa1e0 : 0x0104, deviceID: 0, deviceIeeeAddress: entry.ieee,
        inputClusters: e.input.map(clusterId), outputClusters: e.output.map(clusterId),
        getInputClusters: () => e.input.map((name) => ({ name })), getOutputClusters: () => e.output.map((name) => ({ name })),
        supportsInputCluster: (name) => e.input.includes(name), supportsOutputCluster: (name) => e.output.includes(name),
        getClusterAttributeValue: () => undefined,
        binds: [], configuredReportings: [],
    }));
    return device;
}

// Zigbee2MQTT's `Device.exposes()`: the definition's exposes (called on the device when a
// function) and link quality.
function exposes(definition, device) {
    const list = typeof definition.exposes === "function" ? definition.exposes(device, {}) : [...definition.exposes];
    list.push(new zhc.Numeric("linkquality", zhc.access.STATE).withUnit("lqi").withDescription("Link quality (signal strength)")
        .withValueMin(0).withValueMax(255).withCategory("diagnostic"));
    return list;
}

async function bridgeDevices() {
    const devices = [{
        ieee_address: "0x00124b0029c4d5e6", type: "Coordinator", network_address: 0, supported: true, friendly_name: "Coordinator",
        disabled: false, definition: undefined, power_source: undefined, software_build_id: undefined, date_code: undefined,
        model_id: undefined, interviewing: false, interview_completed: true, interview_state: "SUCCESSFUL", manufacturer: undefined,
        endpoints: { 1: endpointPayload(undefined, undefined, { ID: 1, getInputClusters: () => [], getOutputClusters: () => [] }), 242: endpointPayload(undefined, undefined, { ID: 242, getInputClusters: () => [], getOutputClusters: () => [] }) },
    }];
    for (const entry of HOUSE) {
        const device = zhDevice(entry);
        const definition = await zhc.findByDevice(device, true);
        if (!definition) throw new Error(`no definition for ${entry.modelID}`);
        const endpoints = {};
        for (const endpoint of device.endpoints) endpoints[endpoint.ID] = endpointPayload(definition, device, endpoint);
        devices.push({
            ieee_address: entry.ieee, type: entry.type, network_address: entry.nwk, supported: !definition.generated,
            friendly_name: entry.name, disabled: false, description: undefined,
            definition: {
                source: definition.externalConverterName ? "external" : definition.generated ? "generated" : "native",
                model: definition.model, vendor: definition.vendor, description: definition.description,
                exposes: exposes(definition, device), supports_ota: !!definition.ota, options: definition.options ?? [],
                version: definition.version, icon: undefined,
            },
            power_source: entry.powerSource, software_build_id: entry.softwareBuildID, date_code: entry.dateCode, model_id: entry.modelID,
            interviewing: false, interview_completed: true, interview_state: "SUCCESSFUL", manufacturer: entry.manufacturerName,
            endpoints,
        });
    }
    return devices;
}

function endpointPayload(definition, device, endpoint) {
    let name;
    if (definition?.endpoint) {
        for (const [key, id] of Object.entries(definition.endpoint(device))) {
            if (id === endpoint.ID) { name = key; break; }
        }
    }
    return {
        name: name === "default" ? undefined : name, scenes: [], bindings: [], configured_reportings: [],
        clusters: { input: endpoint.getInputClusters().map((c) => c.name), output: endpoint.getOutputClusters().map((c) => c.name) },
    };
}

function bridgeGroups() {
    const ieee = (name) => {
        const entry = HOUSE.find((d) => d.name === name);
        if (!entry) throw new Error(`no device ${name}`);
        return entry.ieee;
    };
    return GROUPS.map((g) => ({
        id: g.id, friendly_name: g.name, description: undefined, scenes: [],
        members: g.members.map(([name, endpoint]) => ({ ieee_address: ieee(name), endpoint })),
    }));
}

// Zigbee2MQTT's stable stringify: `toJSON` honoured, object keys sorted, `undefined` and
// functions left out. Returned as plain data to indent.
function plain(value) {
    if (value === null || typeof value !== "object") return value;
    if (typeof value.toJSON === "function") return plain(value.toJSON());
    if (Array.isArray(value)) return value.map((v) => (v === undefined || typeof v === "function" ? null : plain(v)));
    const out = {};
    for (const key of Object.keys(value).sort()) {
        const v = value[key];
        if (v === undefined || typeof v === "function") continue;
        out[key] = plain(v);
    }
    return out;
}

const payload = groupsOnly ? bridgeGroups() : await bridgeDevices();
process.stdout.write(`${JSON.stringify(plain(payload), null, 2)}\n`);
