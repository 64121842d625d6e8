// One resource's controller (an engine, a unit or one direction of a link): executes its
// instruction stream, compiled by fpdeep.codegen.program from the step's task graph and loaded by the
// host. Instructions are 64-bit words:
//   [63:60] op   END    the program of this step is over
//                WAIT   [59:52] resource, [31:0] n: until that resource has ended n tasks
//                IN     [59:56] input mover, [55] hold, [54:53] parts-1, [52] chain,
//                       [51:44] bank, [43:24] address, [23:0] words: arm the mover (with
//                       chain, the mover's next IN continues its stream)
//                OUT    same fields, an output mover
//                CFG    [59:52] field, [47:0] value: a runtime configuration input
//                GO     [59] start pulse, [58] flush pulse, [57] wait for done, [56] a task
//                       ends here: run the armed movers; after the inputs, pulse; then wait
//                       for done and the outputs
//                MEM    [55:54] log2 of a word's bytes, [47:0] byte address: where the next
//                       IN or OUT of bank 255 (off-chip memory) goes; held on cmd_maddr
// `go` starts the program at 0 (train) or at FWD (forward only, `mode`): the forward-only
// program follows the training program in the same memory.
`default_nettype none

module fpdeep_sequencer #(
    parameter int NIN = 1,
    parameter int NOUT = 1,
    parameter int NCFG = 1,
    parameter int CFGW = 48,
    parameter int NRES = 1,
    parameter int RW = 8,       // resource-number bits
    parameter int CW = 32,      // task-count bits
    parameter int PD = 64,      // program words
    parameter int FWD = PD / 2, // where the forward-only program starts
    parameter int BW = 8,
    parameter int AW = 20,
    parameter int LW = 24
) (
    input  wire logic                 clk,
    input  wire logic                 rst,
    input  wire logic                 go,
    input  wire logic                 mode,
    input  wire logic                 cancel,
    // program load
    input  wire logic                 prog_we,
    input  wire logic [$clog2(PD)-1:0] prog_addr,
    input  wire logic [63:0]          prog_data,
    // every resource's count of ended tasks (this one's included)
    input  wire logic [NRES*CW-1:0]   ended_all,
    output logic      [CW-1:0]        ended,
    output logic                      finished,   // END reached (or idle)
    output logic                      waiting,    // blocked on a WAIT
    output logic                      running,    // inside a GO
    // movers
    output logic      [NIN-1:0]       in_cmd,
    output logic      [NOUT-1:0]      out_cmd,
    output logic      [BW-1:0]        cmd_bank,
    output logic      [AW-1:0]        cmd_addr,
    output logic      [LW-1:0]        cmd_len,
    output logic                      cmd_hold,
    output logic      [1:0]           cmd_parts,
    output logic                      cmd_chain,
    output logic      [47:0]          cmd_maddr,
    output logic      [1:0]           cmd_mslot,
    input  wire logic [NIN-1:0]       in_busy,
    input  wire logic [NOUT-1:0]      out_busy,
    // the resource
    output logic      [NCFG*CFGW-1:0] cfg,
    output logic                      start,
    output logic                      flush,
    input  wire logic                 done
);
    localparam logic [3:0] END = 4'd0, WAIT = 4'd1, IN = 4'd2, OUT = 4'd3, CFG = 4'd4,
                           GO = 4'd5, MEM = 4'd6;
    localparam int PA = $clog2(PD);
    typedef enum logic [2:0] {IDLE, EXEC, INPUTS, PULSE, OUTPUTS} state_t;

    logic [63:0] prog [PD];
    logic [PA-1:0] pc;
    state_t state;
    logic [63:0] ir;
    logic [3:0] flags;
    logic done_seen;
    logic [NIN-1:0] in_armed;
    logic [NOUT-1:0] out_armed;

    always_ff @(posedge clk) if (prog_we) prog[prog_addr] <= prog_data;

    assign ir = prog[pc];
    wire logic [3:0] op = ir[63:60];
    wire logic [RW-1:0] wait_res = ir[52 +: RW];
    wire logic [CW-1:0] wait_n = ir[CW-1:0];
    wire logic wait_met = ended_all[int'(wait_res)*CW +: CW] >= wait_n;

    assign cmd_bank = ir[44 +: BW];
    assign cmd_addr = ir[24 +: AW];
    assign cmd_len = ir[LW-1:0];
    assign cmd_hold = ir[55];
    assign cmd_parts = ir[54:53];
    assign cmd_chain = ir[52];
    always_comb begin
        in_cmd = '0;
        out_cmd = '0;
        for (int k = 0; k < NIN; k++)
            if (state == EXEC && op == IN && ir[59:56] == 4'(k)) in_cmd[k] = 1'b1;
        for (int k = 0; k < NOUT; k++)
            if (state == EXEC && op == OUT && ir[59:56] == 4'(k)) out_cmd[k] = 1'b1;
    end

    assign finished = (state == IDLE);
    assign waiting = (state == EXEC) && (op == WAIT) && !wait_met;
    assign running = (state == INPUTS) || (state == PULSE) || (state == OUTPUTS);

    always_ff @(posedge clk) begin
        start <= 1'b0;
        flush <= 1'b0;
        if (rst || cancel) begin
            state <= IDLE;
            pc <= '0;
            ended <= '0;
            in_armed <= '0;
            out_armed <= '0;
            if (rst) cfg <= '0;
        end else begin
            if (done) done_seen <= 1'b1;
            case (state)
                IDLE: if (go) begin
                    state <= EXEC;
                    pc <= mode ? PA'(FWD) : '0;
                    ended <= '0;
                end
                EXEC: case (op)
                    END: state <= IDLE;
                    WAIT: if (wait_met) pc <= pc + 1'b1;
                    IN: begin
                        in_armed <= in_armed | in_cmd;
                        pc <= pc + 1'b1;
                    end
                    OUT: begin
                        out_armed <= out_armed | out_cmd;
                        pc <= pc + 1'b1;
                    end
                    MEM: begin
                        cmd_maddr <= ir[47:0];
                        cmd_mslot <= ir[55:54];
                        pc <= pc + 1'b1;
                    end
                    CFG: begin
                        // a constant offset per register: a variable one would be a
                        // multiplier, which synthesis may put in a DSP slice
                        for (int k = 0; k < NCFG; k++)
                            if (int'(ir[52 +: 8]) == k) cfg[k*CFGW +: CFGW] <= CFGW'(ir[47:0]);
                        pc <= pc + 1'b1;
                    end
                    GO: begin
                        flags <= ir[59:56];
                        done_seen <= 1'b0;
                        state <= INPUTS;
                    end
                    default: state <= IDLE;
                endcase
                // the movers were armed at least a cycle ago, so busy already shows them
                INPUTS: if ((in_busy & in_armed) == '0) begin
                    start <= flags[3];
                    flush <= flags[2];
                    state <= PULSE;
                end
                PULSE: state <= OUTPUTS;
                OUTPUTS: if ((!flags[1] || done_seen) && (out_busy & out_armed) == '0) begin
                    in_armed <= '0;
                    out_armed <= '0;
                    if (flags[0]) ended <= ended + 1'b1;
                    pc <= pc + 1'b1;
                    state <= EXEC;
                end
                default: state <= IDLE;
            endcase
        end
    end
endmodule

`default_nettype wire
