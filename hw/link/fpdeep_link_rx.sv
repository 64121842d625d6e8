// fpdeep link framing, receive side: routes each {channel, last, data} link word to its
// channel's stream (the inverse of fpdeep_link_tx).
`default_nettype none

module fpdeep_link_rx #(
    parameter int DW  = 16,
    parameter int NCH = 2,
    parameter int CHW = (NCH > 1) ? $clog2(NCH) : 1
) (
    input  wire logic [CHW+DW:0]      s_data,
    input  wire logic                 s_valid,
    output logic                      s_ready,
    output logic [DW-1:0]             m_data,    // shared by all channels
    output logic                      m_last,
    output logic [NCH-1:0]            m_valid,
    input  wire logic [NCH-1:0]       m_ready
);
    wire logic [CHW-1:0] chan = s_data[DW+1 +: CHW];
    assign m_data = s_data[DW-1:0];
    assign m_last = s_data[DW];
    always_comb begin
        m_valid = '0;
        m_valid[chan] = s_valid;
    end
    assign s_ready = m_ready[chan];
endmodule

`default_nettype wire
