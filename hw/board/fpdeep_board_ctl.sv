// The board's step control: a CSR start begins a step on every sequencer (the train program,
// or the forward-only one in `mode` 1) once every required store bank and every sequencer's
// program has been loaded; the step is done when every sequencer has reached its END. It
// keeps the counters the CSR shows (steps, cycles of the last step, per resource the cycles
// it was active, those it waited, and its active window: first to last active cycle) and
// two checks: a watchdog that ends a step which makes no
// progress for WATCHDOG cycles (error 5, the stalled resource's number in `stalled_unit`), and
// the movers' framing flags (error 6), and the link ends' stuck and overflow flags (error 7). A host packet fault sets its error code (1-3) too.
// Error codes: fpdeep.hwlib.protocol.ERRORS.
`default_nettype none

module fpdeep_board_ctl #(
    parameter int NRES = 1,
    parameter int NB = 1,
    parameter logic [NB-1:0] REQUIRED = '0,   // banks the host must write before a step
    parameter int WATCHDOG = 1 << 20
) (
    input  wire logic              clk,
    input  wire logic              rst,
    input  wire logic              start,
    input  wire logic              mode_in,
    output logic                   go,
    output logic                   mode,
    output logic                   cancel,
    input  wire logic [NB-1:0]     written,
    input  wire logic [NRES-1:0]   programmed,
    input  wire logic [NRES-1:0]   finished,
    input  wire logic [NRES-1:0]   waiting,
    input  wire logic [NRES-1:0]   running,
    input  wire logic [NRES-1:0]   active,       // an engine's run, else its sequencer's pass
    input  wire logic              progress,     // some beat moved, or an engine is busy
    input  wire logic              frame_error,
    input  wire logic              link_fault,
    input  wire logic              memory_fault, // off-chip memory answered with an error
    input  wire logic              host_fault,
    input  wire logic [7:0]        host_code,
    output logic      [1:0]        state,
    output logic      [7:0]        error_code,
    output logic      [31:0]       step_count,
    output logic      [63:0]       cycle_count,
    output logic      [15:0]       stalled_unit,
    output logic      [NRES*32-1:0] busy_count,
    output logic      [NRES*32-1:0] stall_count,
    output logic      [NRES*32-1:0] window_count
);
    localparam logic [1:0] IDLE = 2'd0, BUSY = 2'd1, DONE = 2'd2, ERROR = 2'd3;
    localparam logic [7:0] E_NOT_LOADED = 8'd4, E_DEADLOCK = 8'd5, E_FRAME = 8'd6,
                           E_LINK = 8'd7, E_MEMORY = 8'd8;

    logic [31:0] quiet;   // cycles without progress
    logic [NRES*32-1:0] since;   // per resource: cycles since its first active one
    logic [NRES-1:0]    seen;    // per resource: active at least once this step
    logic        begun;   // go was a cycle ago: the sequencers have left IDLE

    wire logic loaded = ((written & REQUIRED) == REQUIRED) && (&programmed);

    // the stalled resource: the first one still waiting (or, failing that, not finished)
    logic [15:0] stuck;
    always_comb begin
        stuck = 16'hFFFF;
        for (int r = NRES - 1; r >= 0; r--) if (!finished[r]) stuck = 16'(r);
        for (int r = NRES - 1; r >= 0; r--) if (waiting[r] || running[r]) stuck = 16'(r);
    end

    always_ff @(posedge clk) begin
        go <= 1'b0;
        cancel <= 1'b0;
        if (rst) begin
            state <= IDLE;
            error_code <= 8'd0;
            step_count <= '0;
            cycle_count <= '0;
            stalled_unit <= 16'hFFFF;
            busy_count <= '0;
            stall_count <= '0;
            window_count <= '0;
            since <= '0;
            seen <= '0;
            mode <= 1'b0;
            begun <= 1'b0;
            quiet <= '0;
        end else begin
            if (host_fault) begin
                error_code <= host_code;
                if (state != BUSY) state <= ERROR;
            end
            if (start && state != BUSY) begin
                if (!loaded) begin
                    state <= ERROR;
                    error_code <= E_NOT_LOADED;
                end else begin
                    go <= 1'b1;
                    mode <= mode_in;
                    state <= BUSY;
                    error_code <= 8'd0;
                    stalled_unit <= 16'hFFFF;
                    cycle_count <= '0;
                    busy_count <= '0;
                    stall_count <= '0;
                    window_count <= '0;
                    since <= '0;
                    seen <= '0;
                    quiet <= '0;
                    begun <= 1'b0;
                end
            end else if (state == BUSY) begin
                begun <= 1'b1;
                cycle_count <= cycle_count + 1'b1;
                for (int r = 0; r < NRES; r++) begin
                    if (active[r]) busy_count[r*32 +: 32] <= busy_count[r*32 +: 32] + 1'b1;
                    if (waiting[r]) stall_count[r*32 +: 32] <= stall_count[r*32 +: 32] + 1'b1;
                    // the window ends with the last active cycle seen so far
                    if (seen[r] || active[r]) since[r*32 +: 32] <= since[r*32 +: 32] + 1'b1;
                    if (active[r]) begin
                        seen[r] <= 1'b1;
                        window_count[r*32 +: 32] <= since[r*32 +: 32] + 1'b1;
                    end
                end
                quiet <= progress ? '0 : quiet + 1'b1;
                if (frame_error) begin
                    state <= ERROR;
                    error_code <= E_FRAME;
                    cancel <= 1'b1;
                end else if (link_fault) begin
                    state <= ERROR;
                    error_code <= E_LINK;
                    cancel <= 1'b1;
                end else if (memory_fault) begin
                    state <= ERROR;
                    error_code <= E_MEMORY;
                    cancel <= 1'b1;
                end else if (32'(quiet) >= WATCHDOG) begin
                    state <= ERROR;
                    error_code <= E_DEADLOCK;
                    stalled_unit <= stuck;
                    cancel <= 1'b1;
                end else if (begun && (&finished)) begin
                    state <= DONE;
                    step_count <= step_count + 1'b1;
                end
            end
        end
    end
endmodule

`default_nettype wire
