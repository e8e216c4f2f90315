/** VehicleControlAPI: a car's doors, engine, brakes, climate, lights, cruise control and navigation. */
import { pyRepr, pyStr } from '../py/format.ts';
import * as num from '../py/num.ts';
import { PyRandom } from '../py/random.ts';
import { dict, type PyDict, PyError, iterate, type PyValue, pyEquals, truthy, typeName } from '../py/value.ts';
import { type ApiContext, type BfclApi, configGet, method, type Method } from './api.ts';
import type { SharedState } from './shared.ts';

const MAX_FUEL_LEVEL = 50n;
const MIN_FUEL_LEVEL = 0.0;
const MILE_PER_GALLON = 20.0;

/** Distances between zip codes (either order). */
const DISTANCES: [string, string, number][] = [
  ['83214', '74532', 750.0],
  ['56108', '62947', 320.0],
  ['71354', '83462', 450.0],
  ['47329', '52013', 290.0],
  ['69238', '51479', 630.0],
  ['94016', '83214', 980.0],
  ['94016', '94704', 600.0],
  ['94704', '08540', 2550.0],
  ['94016', '08540', 1950.0],
  ['62947', '47329', 1053.0],
  ['94016', '62947', 780.0],
  ['74532', '94016', 880.0],
];

const ZIPCODES: Record<string, string> = {
  Rivermist: '83214',
  Stonebrook: '74532',
  Maplecrest: '56108',
  Silverpine: '62947',
  Shadowridge: '71354',
  'Sunset Valley': '83462',
  Oakendale: '47329',
  Willowbend: '52013',
  'Crescent Hollow': '69238',
  Autumnville: '51479',
  'San Francisco': '94016',
};

/** `lo <= x <= hi` */
const between = (lo: PyValue, x: PyValue, hi: PyValue): boolean => num.compare(lo, x, '<=') && num.compare(x, hi, '<=');

export class VehicleControlAPI implements BfclApi {
  readonly className = 'VehicleControlAPI';
  readonly methods: ReadonlyMap<string, Method>;
  private readonly random: PyRandom;
  private fuelLevel: PyValue;
  private readonly batteryVoltage: PyValue;
  private engineState: PyValue;
  private remainingUnlockedDoors: PyValue;
  private readonly doorStatus: PyDict;
  private acTemperature: PyValue;
  private fanSpeed: PyValue;
  private acMode: PyValue;
  private readonly humidityLevel: PyValue;
  private headLightStatus: PyValue;
  private parkingBrakeStatus: PyValue;
  private parkingBrakeForce: PyValue;
  private slopeAngle: PyValue;
  private brakePedalStatus: PyValue;
  private brakePedalForce: PyValue;
  private distanceToNextVehicle: PyValue;
  private cruiseStatus: PyValue;
  private destination: PyValue;
  private readonly tires: [string, PyValue][];
  private readonly longContext: boolean;

  constructor(ctx: ApiContext) {
    const c = ctx.config;
    const get = (k: string, d: PyValue) => configGet(c, k, d);
    this.random = new PyRandom(get('random_seed', 141053n) as bigint);
    this.fuelLevel = get('fuelLevel', 0.0);
    this.batteryVoltage = get('batteryVoltage', 12.6);
    this.engineState = get('engineState', 'stopped');
    this.doorStatus = get(
      'doorStatus',
      dict([
        ['driver', 'unlocked'],
        ['passenger', 'unlocked'],
        ['rear_left', 'unlocked'],
        ['rear_right', 'unlocked'],
      ]),
    ) as PyDict;
    this.remainingUnlockedDoors = BigInt(4 - [...this.doorStatus.values()].filter((s) => s === 'locked').length);
    this.acTemperature = get('acTemperature', 25.0);
    this.fanSpeed = get('fanSpeed', 50n);
    this.acMode = get('acMode', 'auto');
    this.humidityLevel = get('humidityLevel', 50.0);
    this.headLightStatus = get('headLightStatus', 'off');
    this.parkingBrakeStatus = get('parkingBrakeStatus', 'released');
    this.parkingBrakeForce = get('parkingBrakeForce', 0.0);
    this.slopeAngle = get('slopeAngle', 0.0);
    this.brakePedalStatus = get('brakePedalStatus', 'released');
    this.brakePedalForce = get('brakePedalForce', 0.0);
    this.distanceToNextVehicle = get('distanceToNextVehicle', 50.0);
    this.cruiseStatus = get('cruiseStatus', 'inactive');
    this.destination = get('destination', 'None');
    this.tires = [
      ['frontLeftTirePressure', get('frontLeftTirePressure', 32.0)],
      ['frontRightTirePressure', get('frontRightTirePressure', 32.0)],
      ['rearLeftTirePressure', get('rearLeftTirePressure', 30.0)],
      ['rearRightTirePressure', get('rearRightTirePressure', 30.0)],
    ];
    this.longContext = ctx.longContext;
    this.methods = new Map(Object.entries(this.table(ctx.shared)));
  }

  state(): [string, PyValue][] {
    return [
      ['fuelLevel', this.fuelLevel],
      ['batteryVoltage', this.batteryVoltage],
      ['engine_state', this.engineState],
      ['remainingUnlockedDoors', this.remainingUnlockedDoors],
      ['doorStatus', this.doorStatus],
      ['acTemperature', this.acTemperature],
      ['fanSpeed', this.fanSpeed],
      ['acMode', this.acMode],
      ['humidityLevel', this.humidityLevel],
      ['headLightStatus', this.headLightStatus],
      ['parkingBrakeStatus', this.parkingBrakeStatus],
      ['brakePedalStatus', this.brakePedalStatus],
      ['distanceToNextVehicle', this.distanceToNextVehicle],
      ['cruiseStatus', this.cruiseStatus],
      ['destination', this.destination],
      ...this.tires,
      ['long_context', this.longContext],
    ];
  }

  private door(d: PyValue): PyValue {
    if (!this.doorStatus.has(d)) throw new PyError('KeyError', pyRepr(d));
    return this.doorStatus.get(d) as PyValue;
  }

  private table(shared: SharedState): Record<string, Method> {
    const err = (text: string) => dict([['error', text]]);
    return {
      startEngine: method(['ignitionMode'], ({ ignitionMode }) => {
        if (ignitionMode === 'STOP') this.engineState = 'stopped';
        if (num.compare(this.remainingUnlockedDoors, 0n, '>')) {
          const unlocked = [...this.doorStatus].filter(([, s]) => s === 'unlocked').map(([d]) => pyStr(d));
          return err(`All doors must be locked before starting the engine. Here are the unlocked doors: ${unlocked.join(', ')}`);
        }
        if (this.brakePedalStatus !== 'pressed') return err('Brake pedal needs to be pressed when starting the engine.');
        if (!pyEquals(this.brakePedalForce, 1000.0)) return err('Must press the brake fully before starting the engine.');
        if (num.compare(this.fuelLevel, MIN_FUEL_LEVEL, '<')) return err('Fuel tank is empty.');
        if (ignitionMode !== 'START') return err('Invalid ignition mode.');
        this.engineState = 'running';
        return dict([
          ['engineState', this.engineState],
          ['fuelLevel', this.fuelLevel],
          ['batteryVoltage', this.batteryVoltage],
        ]);
      }),
      fillFuelTank: method(['fuelAmount'], ({ fuelAmount }) => {
        if (num.compare(fuelAmount!, 0n, '<')) return err('Fuel amount cannot be negative.');
        if (num.compare(num.add(this.fuelLevel, fuelAmount!), MAX_FUEL_LEVEL, '>')) return err('Cannot fill gas above the tank capacity.');
        if (num.compare(num.add(this.fuelLevel, fuelAmount!), MIN_FUEL_LEVEL, '<')) return err('Fuel tank is empty. Min fuel level is 0 gallons.');
        this.fuelLevel = num.add(this.fuelLevel, fuelAmount!);
        return dict([['fuelLevel', this.fuelLevel]]);
      }),
      lockDoors: method(['unlock', 'door'], ({ unlock, door }) => {
        const target = truthy(unlock!) ? 'unlocked' : 'locked';
        for (const d of iterate(door!)) {
          if (this.door(d) === target) continue;
          this.doorStatus.set(d, target);
          this.remainingUnlockedDoors = truthy(unlock!) ? num.add(this.remainingUnlockedDoors, 1n) : num.sub(this.remainingUnlockedDoors, 1n);
        }
        return dict([
          ['lockStatus', target],
          ['remainingUnlockedDoors', this.remainingUnlockedDoors],
        ]);
      }),
      adjustClimateControl: method(
        ['temperature', { name: 'unit', fallback: () => 'celsius' }, { name: 'fanSpeed', fallback: () => 50n }, { name: 'mode', fallback: () => 'auto' }],
        ({ temperature, unit, fanSpeed, mode }) => {
          if (!between(0n, fanSpeed!, 100n)) return err('Fan speed must be between 0 and 100.');
          this.acTemperature = temperature!;
          if (unit === 'fahrenheit') this.acTemperature = num.truediv(num.mul(num.sub(temperature!, 32n), 5n), 9n);
          this.fanSpeed = fanSpeed!;
          this.acMode = mode!;
          return dict([
            ['currentACTemperature', temperature!],
            ['climateMode', mode!],
            ['humidityLevel', this.humidityLevel],
          ]);
        },
      ),
      get_outside_temperature_from_google: method([], () => {
        if (this.longContext) {
          // BFCL writes the reading into its module-level weather dict and returns that dict.
          const weather = shared.constant('LONG_WEATHER_EXTENSION') as PyDict;
          weather.set('outsideTemperature', this.random.uniform(-10.0, 40.0));
          return weather;
        }
        return dict([['outsideTemperature', this.random.uniform(-10.0, 40.0)]]);
      }),
      get_outside_temperature_from_weather_com: method([], () => dict([['error', 404n]])),
      setHeadlights: method(['mode'], ({ mode }) => {
        if (!['on', 'off', 'auto'].includes(mode as string)) return err('Invalid headlight mode.');
        this.headLightStatus = mode === 'on' ? 'on' : 'off';
        return dict([['headlightStatus', this.headLightStatus]]);
      }),
      displayCarStatus: method(['option'], ({ option }) => {
        const status: PyDict = new Map();
        if (this.longContext) status.set('metadata', shared.constant('CAR_STATUS_METADATA_EXTENSION'));
        const set = (entries: [string, PyValue][]) => entries.forEach(([k, v]) => status.set(k, v));
        switch (option) {
          case 'fuel':
            set([['fuelLevel', this.fuelLevel]]);
            break;
          case 'battery':
            set([['batteryVoltage', this.batteryVoltage]]);
            break;
          case 'doors':
            set([['doorStatus', this.doorStatus]]);
            break;
          case 'climate':
            set([
              ['currentACTemperature', this.acTemperature],
              ['fanSpeed', this.fanSpeed],
              ['climateMode', this.acMode],
              ['humidityLevel', this.humidityLevel],
            ]);
            break;
          case 'headlights':
            set([['headlightStatus', this.headLightStatus]]);
            break;
          case 'parkingBrake':
            set([
              ['parkingBrakeStatus', this.parkingBrakeStatus],
              ['parkingBrakeForce', this.parkingBrakeForce],
              ['slopeAngle', this.slopeAngle],
            ]);
            break;
          case 'brakePedal':
            set([
              ['brakePedalStatus', this.brakePedalStatus],
              ['brakePedalForce', this.brakePedalForce],
            ]);
            break;
          case 'engine':
            set([['engineState', this.engineState]]);
            break;
          default:
            set([['error', 'Invalid option']]);
        }
        return status;
      }),
      activateParkingBrake: method(['mode'], ({ mode }) => {
        if (mode !== 'engage' && mode !== 'release') return err('Invalid mode');
        const engaged = mode === 'engage';
        this.parkingBrakeStatus = engaged ? 'engaged' : 'released';
        this.parkingBrakeForce = engaged ? 500.0 : 0.0;
        this.slopeAngle = 10.0;
        const out: [string, PyValue][] = [
          ['parkingBrakeStatus', this.parkingBrakeStatus],
          ['_parkingBrakeForce', this.parkingBrakeForce],
          ['_slopeAngle', 10.0],
        ];
        if (this.longContext) out.unshift(['parkingBrakeInstruction', shared.constant('PARKING_BRAKE_INSTRUCTION')]);
        return dict(out);
      }),
      pressBrakePedal: method(['pedalPosition'], ({ pedalPosition }) => {
        if (!between(0n, pedalPosition!, 1n)) return err('Pedal position must be between 0 and 1.');
        if (pyEquals(pedalPosition!, 0n)) {
          this.brakePedalStatus = 'released';
          this.brakePedalForce = 0.0;
          return dict([
            ['brakePedalStatus', 'released'],
            ['brakePedalForce', 0.0],
          ]);
        }
        const force = num.mul(pedalPosition!, 1000n);
        this.brakePedalStatus = 'pressed';
        this.brakePedalForce = force;
        return dict([
          ['brakePedalStatus', 'pressed'],
          ['brakePedalForce', num.toPyFloat(force)],
        ]);
      }),
      releaseBrakePedal: method([], () => {
        this.brakePedalStatus = 'released';
        this.brakePedalForce = 0.0;
        return dict([
          ['brakePedalStatus', 'released'],
          ['brakePedalForce', 0.0],
        ]);
      }),
      setCruiseControl: method(['speed', 'activate', 'distanceToNextVehicle'], ({ speed, activate, distanceToNextVehicle }) => {
        const distance = num.toPyFloat(distanceToNextVehicle!);
        const s = num.toPyFloat(speed!);
        if (this.engineState === 'stopped') return err('Start the engine before activating the cruise control.');
        this.distanceToNextVehicle = distance;
        if (truthy(activate!)) {
          if (s < 0 || s > 120 || num.mod(s, 5n) !== 0) return err('Invalid speed');
          this.cruiseStatus = 'active';
        } else this.cruiseStatus = 'inactive';
        return dict([
          ['cruiseStatus', this.cruiseStatus],
          ['currentSpeed', s],
          ['distanceToNextVehicle', distance],
        ]);
      }),
      get_current_speed: method([], () => dict([['currentSpeed', this.random.uniform(0.0, 120.0)]])),
      display_log: method(['messages'], ({ messages }) => dict([['log', messages!]])),
      estimate_drive_feasibility_by_mileage: method(['distance'], ({ distance }) =>
        dict([['canDrive', !num.compare(num.mul(this.fuelLevel, MILE_PER_GALLON), distance!, '<')]]),
      ),
      liter_to_gallon: method(['liter'], ({ liter }) => dict([['gallon', num.mul(liter!, 0.264172)]])),
      gallon_to_liter: method(['gallon'], ({ gallon }) => dict([['liter', num.mul(gallon!, 3.78541)]])),
      estimate_distance: method(['cityA', 'cityB'], ({ cityA, cityB }) => {
        const hit = DISTANCES.find(([a, b]) => (cityA === a && cityB === b) || (cityA === b && cityB === a));
        const out = hit ? dict([['distance', hit[2]]]) : err('distance not found in database.');
        if (this.longContext) out.set('intermediaryCities', shared.constant('INTERMEDIARY_CITIES'));
        return out;
      }),
      get_zipcode_based_on_city: method(['city'], ({ city }) =>
        dict([['zipcode', typeof city === 'string' && Object.hasOwn(ZIPCODES, city) ? (ZIPCODES[city] as string) : '00000']]),
      ),
      set_navigation: method(['destination'], ({ destination }) => {
        this.destination = destination!;
        if (typeof destination !== 'string') throw new PyError('TypeError', `can only concatenate str (not "${typeName(destination!)}") to str`);
        return dict([['status', `Navigating to ${destination}`]]);
      }),
      check_tire_pressure: method([], () => {
        const average = num.truediv(num.sum(this.tires.map(([, v]) => v)), 4n);
        return dict([
          ...this.tires,
          ['healthy_tire_pressure', between(30n, average, 35n)],
          ['car_info', this.longContext ? shared.constant('CAR_STATUS_METADATA_EXTENSION') : new Map()],
        ]);
      }),
      find_nearest_tire_shop: method([], () => dict([['shopLocation', '456 Oakwood Avenue, Rivermist, 83214']])),
    };
  }
}
